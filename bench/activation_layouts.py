#!/usr/bin/python3
"""One convolution in each activation layout tlmc computes in, side by side.

    /usr/bin/python3 bench/activation_layouts.py [--tlmc build-bench/driver/tlmc]
        [--workloads W3,W4,W6,U1,U2,U3,U4,U5] [-O 0] [--repeats 2]

For each workload of bench/workloads (a Conv and its element-wise epilogue) the script
writes three models: the workload as it is (ONNX's [N, C, H, W]); the same with its input
channels-last ([N, H, W, C], tlmc's attribute channels_last on the Conv); and with blocked
channels ([N, C/B, H, W, B], attribute channel_block = B: the float32 vector width of this
CPU, 16 with AVX-512 and 8 otherwise, halved until it divides the input and output
channels). Each model holds one layout throughout, so no conversion is timed: it is the
kernel a chain of that layout runs. `tlmc MODEL --profile -O LEVEL` (an empty tuning
database, so -O0 is the rule's schedule) times each, --repeats times, alternating the
layouts; the table shows the median of the runs' medians in us, the convolution's GFLOP/s
(2 x multiply-adds over that time) and each layout's time over channels-last's.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

import yaml

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_WORKLOADS = ["W3", "W4", "W6", "U1", "U2", "U3", "U4", "U5"]
ONE_RUN = re.compile(r"^one run: ([0-9.]+) us")


def vector_block():
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    return 16 if "avx512f" in flags else 8


def conv_of(model):
    convs = [n for n in model["nodes"] if n["op"] == "Conv"]
    if len(convs) != 1:
        sys.exit("activation_layouts.py: a workload must have exactly one Conv")
    return convs[0]


def multiply_adds(model):
    """The Conv's multiply-adds, from its input, weight and attributes."""
    conv = conv_of(model)
    x = list(model["inputs"].values())[0]["shape"]
    w = model["weights"][conv["inputs"][1]]["shape"]
    attrs = conv.get("attrs", {})
    pads = attrs.get("pads", [0] * (2 * (len(x) - 2)))
    strides = attrs.get("strides", [1] * (len(x) - 2))
    out = 1
    for i, extent in enumerate(x[2:]):
        rank = len(x) - 2
        out *= (extent + pads[i] + pads[i + rank] - w[2 + i]) // strides[i] + 1
    taps = 1
    for k in w[2:]:
        taps *= k
    return x[0] * w[0] * out * w[1] * taps


def variant(model, layout, block):
    """The model with its input and Conv in `layout`: model, channels-last or blocked."""
    m = yaml.safe_load(yaml.safe_dump(model))
    name, spec = list(m["inputs"].items())[0]
    s = spec["shape"]
    conv = conv_of(m)
    attrs = conv.setdefault("attrs", {})
    if layout == "channels-last":
        spec["shape"] = [s[0]] + s[2:] + [s[1]]
        attrs["channels_last"] = 1
    elif layout == "blocked":
        spec["shape"] = [s[0], s[1] // block] + s[2:] + [block]
        attrs["channel_block"] = block
    m["name"] = m["name"] + "_" + layout.replace("-", "_")
    return m


def block_for(model, widest):
    conv = conv_of(model)
    channels = list(model["inputs"].values())[0]["shape"][1]
    outputs = model["weights"][conv["inputs"][1]]["shape"][0]
    b = widest
    while b > 1 and (channels % b or outputs % b):
        b //= 2
    return b


def time_us(tlmc, path, opt, tuning_db):
    cmd = [tlmc, path, "--profile", "-O", str(opt), "--tuning-db", tuning_db]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("activation_layouts.py: " + " ".join(cmd) + " failed:\n" + out.stdout +
                 out.stderr)
    for line in out.stdout.splitlines() + out.stderr.splitlines():
        m = ONE_RUN.match(line)
        if m:
            return float(m.group(1))
    sys.exit("activation_layouts.py: no 'one run' line from " + " ".join(cmd))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tlmc", default=os.path.join(REPO, "build-bench", "driver", "tlmc"))
    p.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS))
    p.add_argument("-O", dest="opt", type=int, default=0)
    p.add_argument("--repeats", type=int, default=2)
    a = p.parse_args()
    if not os.access(a.tlmc, os.X_OK):
        sys.exit("activation_layouts.py: no tlmc at " + a.tlmc + " (give --tlmc)")
    widest = vector_block()
    layouts = ["model", "channels-last", "blocked"]
    with open("/proc/cpuinfo") as f:
        cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    print("# one Conv per model in each activation layout, tlmc -O%d --profile (no conversions"
          " timed); %s, %d online cores; median of %d runs; blocks of up to %d" %
          (a.opt, cpu, os.cpu_count(), a.repeats, widest))
    print("| workload | model us | channels-last us | blocked us (B) | model GFLOP/s | "
          "channels-last GFLOP/s | blocked GFLOP/s | model / cl | blocked / cl |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "empty.db")
        for w in a.workloads.split(","):
            with open(os.path.join(REPO, "bench", "workloads", w + ".yaml")) as f:
                model = yaml.safe_load(f)
            block = block_for(model, widest)
            paths = {}
            for layout in layouts:
                if layout == "blocked" and block < 2:
                    continue
                paths[layout] = os.path.join(work, w + "_" + layout + ".yaml")
                with open(paths[layout], "w") as f:
                    yaml.safe_dump(variant(model, layout, block), f, sort_keys=False)
            runs = {layout: [] for layout in paths}
            for _ in range(a.repeats):
                for layout, path in paths.items():
                    runs[layout].append(time_us(a.tlmc, path, a.opt, db))
            us = {layout: statistics.median(r) for layout, r in runs.items()}
            flops = 2 * multiply_adds(model)
            gflops = {layout: flops / t * 1e-3 for layout, t in us.items()}
            cl = us["channels-last"]
            blocked = us.get("blocked")
            print("| %s | %.1f | %.1f | %s | %.1f | %.1f | %s | %.2f | %s |" % (
                w, us["model"], cl,
                "%.1f (%d)" % (blocked, block) if blocked else "- (no block divides)",
                gflops["model"], gflops["channels-last"],
                "%.1f" % gflops["blocked"] if blocked else "-", us["model"] / cl,
                "%.2f" % (blocked / cl) if blocked else "-"))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
