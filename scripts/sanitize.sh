#!/usr/bin/env bash
# The compiler and its tests built with clang under AddressSanitizer and
# UndefinedBehaviorSanitizer (-DTLMC_SANITIZE=ON, in build-asan), then the fast part of the
# test suite run on it: every label but the model zoo, the operator tests, the lint checks
# and the fuzzers, and without the tests that take longest (tests/longest_tests.txt).
# Arguments go to ctest (-R Name, -L ops). docs/security.md gives the time it takes.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -S . -B build-asan -G Ninja -DTLMC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DTLMC_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan
# The fast part: the tests of tests/longest_tests.txt (12 s or more in a plain build, and
# ten times that or more under the sanitizers) are left out, by name.
slow=$(bash scripts/slow-tests-regex.sh)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1
# Labels left out: TLMC_SANITIZE_SKIP (the operator tests, ops, compile and run many kernels
# each, 10-45 s apiece under the sanitizers; TLMC_SANITIZE_SKIP='zoo|lint' runs them).
skip=${TLMC_SANITIZE_SKIP:-zoo|zoo_cuda|lint|fuzz|ops}
ctest --test-dir build-asan --output-on-failure -j "$(nproc)" -LE "$skip" -E "$slow" "$@"
