#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: installs what tlmc needs, builds it, then
# compiles the bundled residual CNN (examples/resnet_block.yaml) into a kernel library,
# checks it against the reference interpreter, links a C program with it and runs it.
set -euo pipefail
cd "$(dirname "$0")"

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build --target tlmc

mkdir -p build/demo
./build/driver/tlmc examples/resnet_block.yaml -o build/demo/libresnet_block.a
./build/driver/tlmc examples/resnet_block.yaml --check
cc -O2 -std=c11 -DMODEL=resnet_block -Ibuild/demo examples/run_model.c build/demo/libresnet_block.a \
  -lpthread -lm -o build/demo/run_resnet_block
./build/demo/run_resnet_block
