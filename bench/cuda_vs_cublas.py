#!/usr/bin/python3
"""W1-W6 on the GPU of this machine: tlmc's kernels beside cuBLAS and cuDNN, TF32 off.

    /usr/bin/python3 bench/cuda_vs_cublas.py [--tlmc build-bench/driver/tlmc]
        [--levels 0,1,2] [--work build-bench/cuda]

Needs a GPU (`--target cuda`, the GPU tlmc finds) and the CUDA toolkit's nvcc, cuBLAS and
cuDNN; without a GPU it says why and exits with status 3, having timed nothing. For each
workload of bench/workloads and each -O level it runs

    tlmc W.yaml --target cuda -O LEVEL --tuning-db WORK/tuning.db --check
    tlmc W.yaml --target cuda -O LEVEL --tuning-db WORK/tuning.db --profile

(-O2 measures its candidates on the GPU into WORK/tuning.db first, and the second command
reads them back; -O0 and -O1 are given a database that does not exist, so that no record
chooses their schedules), and takes the sum of the profile's per-call medians (CUDA events around each
call), with the analytic model's estimate of the same calls beside it (never measured: how
far it is from the time is what it is checked for); each profile, call by call, is kept in
WORK/profile-W-OLEVEL.txt. The peers, bench/cuda_peers.cu built by nvcc, run in the same session: cuBLAS's
sgemm (default math: no TF32) and cuDNN's convolution (FMA math, the fastest algorithm
cudnnFindConvolutionForwardAlgorithm reports), with a bias and ReLU that the library does
not fuse timed as a kernel of their own, each the median of back-to-back runs between two
CUDA events. tlmc's time is, per call, the median of the time between the events around it,
summed over the calls; the library runs through its hosted entry, which allocates, uploads
and downloads between runs (outside the events), so a call may include the host's launch
latency where the GPU waited for it.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROFILE_SUM = re.compile(r"one run on the GPU \((.*?)\): the calls' medians add up to ([0-9.]+) us"
                         r".*the analytic model estimated ([0-9.]+) us")
FP32 = re.compile(r"fp32=(\d+)GF/s")


def nvcc():
    for root in (os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME")):
        if root and os.access(os.path.join(root, "bin", "nvcc"), os.X_OK):
            return os.path.join(root, "bin", "nvcc")
    found = shutil.which("nvcc")
    if found:
        return found
    if os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
        return "/usr/local/cuda/bin/nvcc"
    return None


def tlmc_run(args, extra):
    out = subprocess.run([args.tlmc] + extra, capture_output=True, text=True)
    return out.returncode, out.stdout + out.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tlmc", default=os.path.join(REPO, "build-bench", "driver", "tlmc"))
    ap.add_argument("--workloads", default="W1,W2,W3,W4,W5,W6")
    ap.add_argument("--levels", default="0,1,2")
    ap.add_argument("--work", default=os.path.join(REPO, "build-bench", "cuda"))
    args = ap.parse_args()

    rc, target = tlmc_run(args, ["--print-target", "--target", "cuda"])
    if rc != 0 or "gpu1" not in target:
        print("no GPU to time kernels on: " + target.strip().splitlines()[0])
        return 3
    compiler = nvcc()
    if not compiler:
        print("no nvcc: the peers (cuBLAS, cuDNN) cannot be built")
        return 3
    os.makedirs(args.work, exist_ok=True)
    peers_exe = os.path.join(args.work, "cuda_peers")
    # Without cuBLAS or cuDNN to build them, the table has tlmc's columns alone. A build
    # newer than the source (an earlier run's, in the same WORK) is used as it is.
    source = os.path.join(REPO, "bench", "cuda_peers.cu")
    fresh = (os.path.exists(peers_exe) and
             os.path.getmtime(peers_exe) >= os.path.getmtime(source))
    built = subprocess.CompletedProcess([], 0) if fresh else subprocess.run(
        [compiler, "-O2", "-std=c++17", source, "-lcublas", "-lcudnn", "-o", peers_exe],
        capture_output=True, text=True)
    if built.returncode != 0:  # cuDNN missing, say: cuBLAS's workloads alone
        print("the peers did not build with cuDNN (cuBLAS alone): " +
              (built.stdout + built.stderr).strip()[-400:])
        built = subprocess.run([compiler, "-O2", "-std=c++17", "-DCUDA_PEERS_NO_CUDNN", source,
                                "-lcublas", "-o", peers_exe], capture_output=True, text=True)
    if built.returncode != 0:
        print("the peers did not build (tlmc's columns alone): " +
              (built.stdout + built.stderr).strip()[-400:])
        peers_exe = None
    print(target.strip())
    fp32 = FP32.search(target)
    if fp32:
        print(f"fp32 peak of the descriptor: {fp32.group(1)} GFLOP/s")

    db = os.path.join(args.work, "tuning.db")
    levels = [int(x) for x in args.levels.split(",") if x]
    workloads = [w for w in args.workloads.split(",") if w]
    times = {}
    for w in workloads:
        model = os.path.join(REPO, "bench", "workloads", w + ".yaml")
        for level in levels:
            # -O0 and -O1 read no records (an -O2 run's would choose their schedules).
            level_db = db if level >= 2 else os.path.join(args.work, "no-records.db")
            common = [model, "--target", "cuda", "-O", str(level), "--tuning-db", level_db]
            rc, out = tlmc_run(args, common + ["--check"])
            verdict = "passed" if rc == 0 and "check passed" in out else "FAILED"
            rc, out = tlmc_run(args, common + ["--profile"])
            with open(os.path.join(args.work, f"profile-{w}-O{level}.txt"), "w") as f:
                f.write(out)
            m = PROFILE_SUM.search(out)
            times[(w, level)] = (float(m.group(2)) if m else None, verdict,
                                 float(m.group(3)) if m else None)
            if not m:
                print(f"{w} -O{level}: tlmc --profile failed ({rc}): {out[-400:]}", file=sys.stderr)
            else:
                print(f"{w} -O{level}: {m.group(2)} us (estimated {m.group(3)}), check {verdict}",
                      file=sys.stderr)

    peers = {}
    if peers_exe:
        out = subprocess.run([peers_exe], capture_output=True, text=True)
        if out.returncode != 0:
            print("the peers failed: " + (out.stdout + out.stderr)[-400:])
        for line in out.stdout.splitlines():
            name, peer, us = line.split()
            peers[name] = (peer, float(us))

    header = "| workload | " + " | ".join(f"-O{l} us (estimate, check)" for l in levels)
    print("\n" + header + " | peer | peer us | peer / tlmc's best |")
    print("|---" * (len(levels) + 4) + "|")
    for w in workloads:
        cells, best = [], None
        for level in levels:
            us, verdict, estimate = times[(w, level)]
            cells.append("n/a" if us is None else f"{us:.2f} ({estimate:.2f}, {verdict})")
            if us is not None and verdict == "passed":
                best = us if best is None else min(best, us)
        peer, peer_us = peers.get(w, ("n/a", None))
        ratio = f"{peer_us / best:.2f}" if best and peer_us else "n/a"
        peer_cell = "n/a" if peer_us is None else f"{peer_us:.2f}"
        print(f"| {w} | " + " | ".join(cells) + f" | {peer} | {peer_cell} | {ratio} |")
    print("\nperformance ratio above 1: tlmc's kernels are faster than the peer's; in brackets,"
          " the analytic model's estimate of the same calls, in us, and the check's verdict")
    return 0


if __name__ == "__main__":
    sys.exit(main())
