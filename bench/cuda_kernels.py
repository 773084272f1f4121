#!/usr/bin/python3
"""A CUDA target's kernels, as built and as estimated, with the emulated check's verdict.

    /usr/bin/python3 bench/cuda_kernels.py [--tlmc build-bench/driver/tlmc]
        [--target cuda-sm80] [--workloads W1,...,W6] [--models resnet50,...]
        [--levels 0,1,2] [--work build-bench/e2e] [--no-check]

For each workload of bench/workloads (W1-W6 by default) and each model named by --models
(the ONNX exports of bench/e2e_vs_pytorch.py under WORK/models; none by default: the
emulated check of a whole model takes minutes), at each -O level, it runs

    tlmc MODEL --target TARGET -O LEVEL --dump resources --check

and prints one row per __global__ function: launch, registers, spills, shared memory,
occupancy (ptxas's report through NVRTC), the analytic model's estimate (microseconds,
GFLOP/s, what bounds it) beside the descriptor's fp32 peak, and the verdict of --check,
which runs the library in tlmc's CPU emulator against the reference interpreter. Nothing
here runs on a GPU: the estimates are the model's, not measurements. -O1 is the bundled
CUDA language model's likeliest schedule per kernel (trained on the analytic model's
preferences, docs/lm.md); -O2 and -O3 rank candidates by the analytic model. A last table
sums each model's estimated kernel time per level (each distinct kernel once).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# kernel blocks thr regs stack spill smem bar blk/SM warps limited-by est-us GFLOP/s bound
ROW = re.compile(r"^(\S+) +(\d+) +(\d+) +(\d+) +(\d+) +(\d+)/(\d+) +(\d+) +(\d+) +(\d+) +"
                 r"(\d+)% +(.+?) +([0-9.]+) +([0-9.]+) (\S+)$")
PEAK = re.compile(r"against a peak of (\d+) GFLOP/s")


def run(tlmc, model, target, level, check):
    cmd = [tlmc, model, "--target", target, "-O", str(level), "--dump", "resources"]
    with tempfile.TemporaryDirectory() as out_dir:
        cmd += ["--check"] if check else ["--emit", "source", "-o", os.path.join(out_dir, "src")]
        start = time.time()
        out = subprocess.run(cmd, capture_output=True, text=True)
        seconds = time.time() - start
    if out.returncode != 0:
        return None, f"tlmc failed ({out.returncode}): {(out.stdout + out.stderr)[-400:]}", 0, seconds
    rows = [m.groups() for m in map(ROW.match, out.stdout.splitlines()) if m]
    peak = PEAK.search(out.stdout)
    verdict = ("passed" if "check passed" in out.stdout else
               "FAILED" if "check FAILED" in out.stdout else "not run")
    return rows, verdict, int(peak.group(1)) if peak else 0, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tlmc", default=os.path.join(REPO, "build-bench", "driver", "tlmc"))
    ap.add_argument("--target", default="cuda-sm80")
    ap.add_argument("--workloads", default="W1,W2,W3,W4,W5,W6")
    ap.add_argument("--models", default="", help="ONNX exports of WORK/models (e.g. bert,gpt2)")
    ap.add_argument("--levels", default="0,1,2")
    ap.add_argument("--work", default=os.path.join(REPO, "build-bench", "e2e"))
    ap.add_argument("--no-check", action="store_true", help="skip the emulated --check")
    args = ap.parse_args()
    models = [(w, os.path.join(REPO, "bench", "workloads", f"{w}.yaml"))
              for w in args.workloads.split(",") if w]
    for m in (m for m in args.models.split(",") if m):
        onnx = os.path.join(args.work, "models", f"{m}_op17.onnx")
        if not os.path.exists(onnx):
            sys.exit(f"{onnx} is missing: bench/e2e_vs_pytorch.py --models {m} exports it")
        models.append((m, onnx))
    print(f"tlmc --target {args.target}: kernels as ptxas built them (NVRTC) and as the "
          f"analytic model estimates them; nothing ran on a GPU")
    print("| model | -O | kernel | blocks x thr | regs | spill st/ld | smem B | blk/SM | warps "
          "| est us | est GFLOP/s | % peak | bound | check |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    spills = 0
    totals = {}  # (model, level) -> the estimated microseconds of its kernels
    levels = [int(x) for x in args.levels.split(",")]
    for name, path in models:
        for level in levels:
            rows, verdict, peak, seconds = run(args.tlmc, path, args.target, level,
                                               not args.no_check)
            if rows is None:
                print(f"| {name} | {level} | {verdict} |")
                continue
            for r in rows:
                kernel, blocks, thr, regs, _, st, ld, smem, _, bps, warps, _, us, gf, bound = r
                spills += int(st) > 0 or int(ld) > 0
                totals[name, level] = totals.get((name, level), 0.0) + float(us)
                share = 100.0 * float(gf) / peak if peak else 0
                print(f"| {name} | {level} | {kernel} | {blocks} x {thr} | {regs} | {st}/{ld} | "
                      f"{smem} | {bps} | {warps}% | {float(us):.1f} | {float(gf):.0f} | "
                      f"{share:.1f} | {bound} | {verdict} |")
            sys.stderr.write(f"{name} -O{level}: {len(rows)} kernels in {seconds:.0f} s\n")
    print(f"\nkernels that spill: {spills}. None is over a limit: tlmc stops rather than emit "
          f"one, so every row is within the descriptor's limits.")
    print("\nestimated microseconds of each model's kernels (each distinct kernel once), and "
          "the ratio to -O0:")
    print("| model | " + " | ".join(f"-O{l} us" for l in levels) + " | " +
          " | ".join(f"-O0/-O{l}" for l in levels if l != 0) + " |")
    print("|---|" + "---|" * (2 * len(levels) - (0 in levels)))
    for name, _ in models:
        us = [totals.get((name, l)) for l in levels]
        base = totals.get((name, 0))
        ratios = [f"{base / totals[name, l]:.2f}" if base and totals.get((name, l)) else "-"
                  for l in levels if l != 0]
        print(f"| {name} | " + " | ".join(f"{u:.1f}" if u else "-" for u in us) + " | " +
              " | ".join(ratios) + " |")


if __name__ == "__main__":
    main()
