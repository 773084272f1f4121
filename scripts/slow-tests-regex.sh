#!/usr/bin/env bash
# Prints a ctest -E regex naming the tests of tests/longest_tests.txt (12 s or more in a
# plain build), which the quick test loop and the sanitizer run leave out.
set -euo pipefail
cd "$(dirname "$0")/.."
grep -v '^#' tests/longest_tests.txt | awk '{print $1}' | sed 's/[][\.*^$"/()+?{}|]/\\&/g' |
  paste -sd'|'
