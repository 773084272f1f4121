#!/usr/bin/python3
"""The kernels of whole models that move more than they compute, beside a plain copy.

    /usr/bin/python3 bench/memory_kernels_vs_copy.py [--tlmc build-bench/driver/tlmc]
        [--models resnet50,mobilenet_v2,bert,gpt2] [--work build-bench/e2e] [-O 0]
        [--tuning-db FILE] [--repeats 3] [--limit 4]

For each model (the end-to-end list of bench/README.md, exported to WORK/models by
bench/e2e_vs_pytorch.py, which this script runs first when an export is missing) it runs
`tlmc MODEL.onnx --profile -O LEVEL` --repeats times. `--profile` times every kernel call of
a run and, in the same process, a plain copy of as many bytes (memcpy of half the call's
parameter bytes, as much read and written, split across the library's threads:
docs/driver.md). The kernels counted here are those whose nodes hold no Conv, MatMul or
Gemm: elementwise chains, row reductions (Softmax, LayerNormalization), pooling,
transposes, gathers. Per distinct kernel of a model (its workload key), the table shows the
median over the repeats of its median call's time, GB/s and 'x copy' (the call's time over
the copy's), slowest relative to the copy first, and how many kernels are above --limit
times the copy.

Whole profiles vary between processes here (MobileNetV2 4.3 to 7.5 ms in one minute on a
2-core VM), and the copy's time by up to 2x where the bytes are near a cache's size (the
physical pages a process gets): the median over repeats is the figure.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_MODELS = ["resnet50", "mobilenet_v2", "bert", "gpt2"]
PRODUCTS = re.compile(r"\b(Conv|MatMul|Gemm) '")
# call, kernel, workload, us, share, GFLOP/s, GB/s, x copy, nodes
ROW = re.compile(r"^ *(\d+) +(\d+)  ([0-9a-f]{16}) +([0-9.]+) +[0-9.]+% +[0-9.]+ +([0-9.]+)"
                 r" +([0-9.]+)  (.+)$")


def profile(tlmc, model, opt, tuning_db):
    cmd = [tlmc, model, "--profile", "-O", str(opt)]
    if tuning_db:
        cmd += ["--tuning-db", tuning_db]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout}{out.stderr}")
    calls = {}  # workload -> [(us, GB/s, x copy, nodes) per call]
    for line in out.stdout.splitlines():
        m = ROW.match(line)
        if not m or PRODUCTS.search(m.group(7)):
            continue
        calls.setdefault(m.group(3), []).append(
            (float(m.group(4)), float(m.group(5)), float(m.group(6)), m.group(7)))
    # Per kernel, its median call by x copy.
    return {key: sorted(c, key=lambda r: r[2])[len(c) // 2] for key, c in calls.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tlmc", default=os.path.join(REPO, "build-bench", "driver", "tlmc"))
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    ap.add_argument("--work", default=os.path.join(REPO, "build-bench", "e2e"))
    ap.add_argument("-O", dest="opt", type=int, default=0, choices=(0, 1, 2, 3))
    ap.add_argument("--tuning-db", default="", help="tlmc --tuning-db (default: tlmc's)")
    ap.add_argument("--repeats", type=int, default=3, help="profiles per model (default 3)")
    ap.add_argument("--limit", type=float, default=4.0,
                    help="times a copy a kernel should stay within (default 4)")
    args = ap.parse_args()
    models = [m for m in args.models.split(",") if m]
    for m in models:
        onnx = os.path.join(args.work, "models", f"{m}_op17.onnx")
        if not os.path.exists(onnx):
            subprocess.run([sys.executable, os.path.join(REPO, "bench", "e2e_vs_pytorch.py"),
                            "--tlmc", args.tlmc, "--models", m, "--peers", "none",
                            "--runs", "1", "--rounds", "1", "--work", args.work], check=False)
    print(f"tlmc -O{args.opt} --profile, median of {args.repeats} profiles per model; "
          f"kernels without a Conv, MatMul or Gemm; limit {args.limit:g}x a copy")
    print(f"| model | kernel (nodes) | us | GB/s | x copy |")
    print("|---|---|---|---|---|")
    over = total = 0
    for m in models:
        onnx = os.path.join(args.work, "models", f"{m}_op17.onnx")
        runs = [profile(args.tlmc, onnx, args.opt, args.tuning_db) for _ in range(args.repeats)]
        rows = []
        for key in runs[0]:
            seen = [r[key] for r in runs if key in r]
            med = lambda i: statistics.median(s[i] for s in seen)
            rows.append((med(2), med(0), med(1), seen[0][3]))
        rows.sort(reverse=True)
        for copies, us, gbs, nodes in rows:
            nodes = nodes if len(nodes) <= 50 else nodes[:47] + "..."
            print(f"| {m} | {nodes} | {us:.1f} | {gbs:.1f} | {copies:.2f} |")
        over += sum(1 for r in rows if r[0] > args.limit)
        total += len(rows)
    print(f"{over} of {total} kernels above {args.limit:g}x a copy")


if __name__ == "__main__":
    main()
