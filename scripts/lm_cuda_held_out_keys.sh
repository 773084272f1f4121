#!/bin/sh
# Writes the workload keys the CUDA language model must never train on
# (lm/cuda_held_out_keys.txt): every subgraph of W1-W6 and of ResNet-50, MobileNetV2,
# BERT-base and GPT-2 at their benchmark shapes, on both CUDA descriptors.
#   scripts/lm_cuda_held_out_keys.sh TLMC MODELS_DIR > lm/cuda_held_out_keys.txt
# MODELS_DIR holds resnet50_op17.onnx, mobilenet_v2_op17.onnx, bert_op17.onnx and
# gpt2_op17.onnx as tests/zoo/export_models.py writes them.
set -eu
tlmc=$1
models=$2
here=$(cd "$(dirname "$0")/.." && pwd)
echo "# Held out of the CUDA language model's training data: written by scripts/lm_cuda_held_out_keys.sh"
for target in cuda-sm80 cuda-sm90; do
  "$tlmc" lm keys --target "$target" "$here"/bench/workloads/W[1-6].yaml \
    "$models"/resnet50_op17.onnx "$models"/mobilenet_v2_op17.onnx "$models"/bert_op17.onnx \
    "$models"/gpt2_op17.onnx
done | while IFS="$(printf '\t')" read -r key model plan; do
  echo "$key $(basename "$model")"
done | sort -u -k1,1
