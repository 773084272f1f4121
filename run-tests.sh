#!/usr/bin/env bash
# The whole test suite: installs what is needed, builds everything (Debug checks on), and
# runs every ctest label, the slow ones included. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")"

bash scripts/install-deps.sh
cmake -S . -B build-tests -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-tests
ctest --test-dir build-tests --output-on-failure -j "$(nproc)" "$@"
