#!/usr/bin/env bash
# The whole test suite: installs what is needed, builds everything (Debug checks on), and
# runs every ctest label, the slow ones included, then the fuzz harnesses' replay (label
# fuzz, in build-fuzz). Arguments go to both ctest runs (-L ops, -R Name). CI runs exactly
# this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")"

bash scripts/install-deps.sh
cmake -S . -B build-tests -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-tests
# The fuzz harnesses of every reader (label fuzz): a second build with clang, ASan and UBSan.
cmake -S . -B build-fuzz -G Ninja -DTLMC_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTLMC_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz --target tlmc_fuzzers
# ctest starts the tests it knows to be long first, from the timings of earlier runs; a
# fresh build has none, so it is given the longest tests' (tests/longest_tests.txt), under
# the names ctest gives them (a parameterised test's carries "  # GetParam() = ...").
costs=build-tests/Testing/Temporary/CTestCostData.txt
if [ ! -s "$costs" ]; then
  mkdir -p "$(dirname "$costs")"
  ctest --test-dir build-tests -N | sed -n 's/^ *Test *#[0-9]*: //p' >"$costs.names"
  { awk 'NR == FNR { if ($0 !~ /^#/) cost[$1] = $2; next }
         { base = $0; sub(/  # GetParam\(\) = .*/, "", base); if (base in cost) print $0, 1, cost[base] }' \
      tests/longest_tests.txt "$costs.names"
    echo ---; } >"$costs"
  rm -f "$costs.names"
fi
status=0
ctest --test-dir build-tests --output-on-failure -j "$(nproc)" "$@" || status=$?
ctest --test-dir build-fuzz --output-on-failure -j "$(nproc)" "$@" || status=$?
exit $status
