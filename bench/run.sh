#!/usr/bin/env bash
# Configures a Release build in build-bench/, builds bench_kernels (tlmc, the six workload
# libraries it generates, the benchmark) and runs it; arguments go to bench_kernels
# (--threads N, --only W1,W3, --min-runs N, --min-time S, --max-time S, --rounds N; --help).
# The build log goes to stderr, the table to stdout. TLMC_BENCH_JOBS sets ninja's -j (default 1).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-bench"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTLMC_BUILD_BENCH=ON \
  -DBUILD_TESTING=OFF >&2
if ! ninja -C "$build" -t query bench_kernels >/dev/null 2>&1; then
  echo "bench/run.sh: no bench_kernels target: oneDNN not found (install libdnnl-dev)" >&2
  exit 1
fi
ninja -C "$build" -j"${TLMC_BENCH_JOBS:-1}" bench_kernels >&2
exec "$build/bench/bench_kernels" "$@"
