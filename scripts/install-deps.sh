#!/usr/bin/env bash
# Installs the Debian packages tlmc needs to build, test and benchmark. Idempotent: quiet
# and quick when everything is already there. Run as root (or with sudo available).
set -euo pipefail

packages=(
  cmake ninja-build g++ gcc clang binutils pkg-config   # build; clang also checks generated C
  libclang-rt-14-dev                                     # clang's sanitizer and libFuzzer runtimes (tests/fuzz)
  libasan8 libubsan1 libtsan2                            # gcc's sanitizer runtimes (--check --sanitize, the TSan test)
  libyaml-cpp-dev libboost-program-options-dev           # frontend, driver
  libonnx-dev libprotobuf-dev protobuf-compiler          # ONNX import
  python3-onnx python3-torch python3-torchvision        # model-zoo and ONNX conformance tests
  python3-yaml python3-numpy                             # bench/activation_layouts.py, bench/te_program.py
  libsqlite3-dev                                         # the tuning database
  libxgboost-dev                                         # the search's cost model
  llvm-14-dev libclang-cpp14-dev libclang-14-dev         # in-process compilation of candidates
  libgtest-dev                                           # tests
  libdnnl-dev                                            # bench/: the oneDNN peer
  libopenblas0-pthread libopenblas-dev                   # lm/: the model's matrix products; bench/: the OpenBLAS peer
  clang-format clang-tidy                                # lint checks of the test command
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
