#!/usr/bin/env bash
# Configures a Release build in build-bench/, builds bench_kernels (tlmc, the workload
# libraries it generates, the benchmark) and runs it; arguments go to bench_kernels
# (--threads N, --only W1,W3, --min-runs N, --min-time S, --max-time S, --rounds N; --help).
# `--precision bf16` (anywhere among them) builds and runs bench_kernels_bf16 instead: the
# same workloads compiled with tlmc --precision bf16, beside oneDNN in bf16.
# The build log goes to stderr, the table to stdout. TLMC_BENCH_JOBS sets ninja's -j (default 1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-bench"
target=bench_kernels
args=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--precision" ]; then
    case "${2:-}" in
      fp32) ;;
      bf16) target=bench_kernels_bf16 ;;
      *) echo "bench/run.sh: --precision takes fp32 or bf16" >&2; exit 2 ;;
    esac
    shift 2
  else
    args+=("$1")
    shift
  fi
done
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTLMC_BUILD_BENCH=ON \
  -DBUILD_TESTING=OFF >&2
if ! ninja -C "$build" -t query "$target" >/dev/null 2>&1; then
  echo "bench/run.sh: no $target target: oneDNN not found (install libdnnl-dev)" >&2
  exit 1
fi
ninja -C "$build" -j"${TLMC_BENCH_JOBS:-1}" "$target" >&2
exec "$build/bench/$target" "${args[@]}"
