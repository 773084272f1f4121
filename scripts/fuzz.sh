#!/usr/bin/env bash
# Runs tlmc's libFuzzer harnesses (tests/fuzz) for a long time: each for SECONDS seconds
# (default 3600), one after another, on all cores (libFuzzer -fork), growing a working
# corpus in build-fuzz/long/NAME from the seeds. Anything found is left as
# build-fuzz/long/NAME/crash-* (or leak-, timeout-, oom-): fix it, then add the input to
# tests/fuzz/regressions/NAME so that ctest -L fuzz replays it.
#   scripts/fuzz.sh [SECONDS] [NAME...]      names: yaml onnx onnx_external te_text
#                                            schedule records sentences checkpoint
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3600}
shift || true
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(yaml onnx onnx_external te_text schedule records sentences checkpoint)

cmake -S . -B build-fuzz -G Ninja -DTLMC_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTLMC_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz --target tlmc_fuzzers
for n in "${names[@]}"; do
  work=build-fuzz/long/$n
  mkdir -p "$work"
  seeds=../../../tests/fuzz/corpus/$n
  [ "$n" = yaml ] && seeds=../../../examples  # the bundled models themselves
  echo "fuzz.sh: $n for $seconds s"
  (cd "$work" && "../../tests/fuzz/fuzz_$n" -max_total_time="$seconds" -timeout=20 \
     -rss_limit_mb=2048 -fork="$(nproc)" -ignore_crashes=1 -print_final_stats=1 \
     . "$seeds" "../../../tests/fuzz/regressions/$n") 2>&1 |
    grep -E "^#|INFO: fuzzed|stat::|crash|leak|timeout|oom" | tail -20 || true
  ls "$work" | grep -E "^(crash|leak|timeout|oom)-" || echo "fuzz.sh: $n: nothing found"
done
