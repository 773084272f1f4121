#!/usr/bin/env bash
# The development loop's tests: builds build-tests (no package installs, no fuzz build) and
# runs every label but the model zoo, the lint checks and the fuzzers, without the tests
# that take longest (tests/longest_tests.txt): about a third of the whole suite's time;
# run-tests.sh, which CI runs, runs everything. Arguments go to ctest (-R Name, -L ops).
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -S . -B build-tests -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-tests
ctest --test-dir build-tests --output-on-failure -j "$(nproc)" -LE 'zoo|zoo_cuda|lint|fuzz' \
  -E "$(bash scripts/slow-tests-regex.sh)" "$@"
