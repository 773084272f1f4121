#!/usr/bin/python3
"""One convolution in each activation layout tlmc computes in, side by side.

    /usr/bin/python3 bench/activation_layouts.py [--tlmc build-bench/driver/tlmc]
        [--workloads W1,...,W6,U1,...,U9] [-O 0] [--tuning-db FILE] [--repeats 2]
        [--onednn build-bench/bench/bench_kernels]

For each workload of bench/workloads that is a Conv and its element-wise epilogue the
script writes three models (a product, W1, W2, W5 or U6-U9, has one layout, the model's): the workload as it is (ONNX's [N, C, H, W]); the same with its input
channels-last ([N, H, W, C], tlmc's attribute channels_last on the Conv); and with blocked
channels ([N, C/B, H, W, B], attribute channel_block = B: the float32 vector width of this
CPU, 16 with AVX-512 and 8 otherwise, halved until it divides the input and output
channels). Each model holds one layout throughout, so no conversion is timed: it is the
kernel a chain of that layout runs. `tlmc MODEL --profile -O LEVEL --activation-layout
model` (the graph's layout as written; an empty tuning database, so -O0 is the rule's
schedule) times each, --repeats times, alternating the
layouts; the table shows the median of the runs' medians in us, the convolution's GFLOP/s
(2 x multiply-adds over that time) and each layout's time over channels-last's.

With --tuning-db, tlmc builds each model from that database's records (at -O2 and -O3 it
tunes them first, on this machine, and records what it measured). With --onednn (the
bench_kernels program that bench/run.sh builds), the same invocation then runs it on the
same workloads (--onednn-runs times, 2 by default, oneDNN's best figure of them kept) and
prints a second table: tlmc's fastest layout beside oneDNN reading and
writing NCHW and beside oneDNN in the layouts it chooses (blocked channels, its reorders
untimed), with the FMA peak bench_kernels measured in that run and the geometric mean.
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
DEFAULT_WORKLOADS = ["W1", "W2", "W3", "W4", "W5", "W6"] + ["U%d" % i for i in range(1, 10)]
ONE_RUN = re.compile(r"^one run: ([0-9.]+) us")


def vector_block():
    with open("/proc/cpuinfo") as f:
        flags = f.read()
    return 16 if "avx512f" in flags else 8


def conv_of(model):
    """The workload's Conv, or None for a matrix product (one layout: the model's)."""
    convs = [n for n in model["nodes"] if n["op"] == "Conv"]
    if len(convs) > 1:
        sys.exit("activation_layouts.py: a workload must have one Conv at most")
    return convs[0] if convs else None


def shape_of(model, name):
    for group in ("inputs", "weights"):
        if name in model.get(group, {}):
            return model[group][name]["shape"]
    sys.exit("activation_layouts.py: the product reads " + name + ", not an input or weight")


def multiply_adds(model):
    """The Conv's multiply-adds, from its input, weight and attributes; or the product's."""
    conv = conv_of(model)
    if conv is None:
        products = [n for n in model["nodes"] if n["op"] in ("MatMul", "Gemm")]
        if len(products) != 1:
            sys.exit("activation_layouts.py: a workload must have one Conv or one product")
        a, b = (shape_of(model, t) for t in products[0]["inputs"][:2])
        batch = 1
        for extent in a[:-2]:
            batch *= extent
        return batch * a[-2] * a[-1] * b[-1]
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
    if layout == "model":
        return m
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
    # The graph's layout as written: tlmc's plans would rewrite the model in another.
    cmd = [tlmc, path, "--profile", "-O", str(opt), "--tuning-db", tuning_db,
           "--activation-layout", "model"]
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
    p.add_argument("--tuning-db", help="tlmc's tuning database (default: an empty one)")
    p.add_argument("--onednn", help="bench_kernels, to time oneDNN on the same workloads")
    p.add_argument("--onednn-runs", type=int, default=2,
                   help="bench_kernels runs; each oneDNN figure is the best of them")
    a = p.parse_args()
    if a.onednn and not os.access(a.onednn, os.X_OK):
        sys.exit("activation_layouts.py: no bench_kernels at " + a.onednn +
                 " (bench/run.sh --only W6 builds it)")
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
    best = {}  # workload -> (GFLOP/s, layout) of tlmc's fastest layout
    with tempfile.TemporaryDirectory() as work:
        db = os.path.abspath(a.tuning_db) if a.tuning_db else os.path.join(work, "empty.db")
        for w in a.workloads.split(","):
            with open(os.path.join(REPO, "bench", "workloads", w + ".yaml")) as f:
                model = yaml.safe_load(f)
            block = block_for(model, widest) if conv_of(model) else 0
            paths = {}
            for layout in layouts if conv_of(model) else ["model"]:
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
            fastest = min(us, key=us.get)
            best[w] = (gflops[fastest], fastest)
            if "channels-last" not in us:
                print("| %s | %.1f | - | - | %.1f | - | - | - | - |" %
                      (w, us["model"], gflops["model"]))
                sys.stdout.flush()
                continue
            cl = us["channels-last"]
            blocked = us.get("blocked")
            print("| %s | %.1f | %.1f | %s | %.1f | %.1f | %s | %.2f | %s |" % (
                w, us["model"], cl,
                "%.1f (%d)" % (blocked, block) if blocked else "- (no block divides)",
                gflops["model"], gflops["channels-last"],
                "%.1f" % gflops["blocked"] if blocked else "-", us["model"] / cl,
                "%.2f" % (blocked / cl) if blocked else "-"))
            sys.stdout.flush()
        if a.onednn:
            onednn_table(a.onednn, a.workloads.split(","), best, work, a.onednn_runs)


def onednn_table(bench_kernels, workloads, best, work, runs):
    """bench_kernels on the workloads, `runs` times; tlmc's fastest layout beside oneDNN's
    two, each oneDNN figure the best of its runs (the peer's favour: oneDNN's figures here
    have varied by up to 1.4x from one run to the next)."""
    peak = 0
    figures = {}
    for run in range(runs):
        results = os.path.join(work, "onednn%d.tsv" % run)
        cmd = [bench_kernels, "--only", ",".join(workloads), "--results", results]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit("activation_layouts.py: " + " ".join(cmd) + " failed:\n" + out.stdout +
                     out.stderr)
        with open(results) as f:
            for line in f:
                cells = line.rstrip("\n").split("\t")
                if cells[0] == "peak":
                    peak = max(peak, float(cells[1]))
                else:  # workload, tlmc (its library), oneDNN NCHW, OpenBLAS, oneDNN own
                    old = figures.get(cells[0], (0.0, 0.0))
                    figures[cells[0]] = (max(old[0], float(cells[2])),
                                         max(old[1], float(cells[4])))
    print()
    print("# tlmc's fastest layout (above) beside oneDNN, bench_kernels in the same invocation"
          " (oneDNN: best of %d runs); FMA peak %.1f GFLOP/s measured by it (best of its runs)"
          % (runs, peak))
    print("| workload | tlmc GFLOP/s (layout) | % peak | oneDNN NCHW GFLOP/s | "
          "oneDNN own layouts GFLOP/s | tlmc / oneDNN NCHW | tlmc / oneDNN own |")
    print("|---|---|---|---|---|---|---|")
    ratios = {}  # "W", "U" -> tlmc / oneDNN own, per workload
    for w in workloads:
        gflops, layout = best[w]
        nchw, own = figures[w]
        ratios.setdefault(w[0], []).append(gflops / own)
        print("| %s | %.1f (%s) | %.0f | %.1f | %.1f | %.2f | %.2f |" % (
            w, gflops, layout, 100 * gflops / peak, nchw, own, gflops / nchw, gflops / own))
    print()
    for group, r in sorted(ratios.items(), reverse=True):
        print("geometric mean over the %d %s workloads, tlmc / oneDNN in its own layouts: %.2f" %
              (len(r), group, statistics.geometric_mean(r)))


if __name__ == "__main__":
    main()
