#!/bin/sh
# Writes what the language model must never train on (lm/held_out_keys.txt): every subgraph
# of W1-W6, of the unseen shapes (bench/unseen/) and of ResNet-50, MobileNetV2 and BERT-base
# at their benchmark shapes (bench/README.md), in every layout plan, on every x86-64 target,
# and those of --precision bf16 (the products' operands in bfloat16) on the targets that have
# it; each line as `tlmc lm keys` prints it (key, model, plan, shape family), so that
# `tlmc lm sample --hold-out` drops the subgraph and its whole family (docs/lm.md).
#   scripts/lm_held_out_keys.sh TLMC MODELS_DIR > lm/held_out_keys.txt
# MODELS_DIR holds resnet50_op17.onnx, mobilenet_v2_op17.onnx and bert_op17.onnx as
# tests/zoo/export_models.py writes them (--exports resnet50:17,mobilenet_v2:17,bert:17).
set -eu
tlmc=$1
models=$2
here=$(cd "$(dirname "$0")/.." && pwd)
tab=$(printf '\t')
echo "# Held out of the language model's training data: written by scripts/lm_held_out_keys.sh"
for target in x86-64 x86-64-avx2 x86-64-avx512 x86-64-avx512-bf16:bf16 x86-64-amx:bf16; do
  precision=fp32
  case $target in *:bf16) target=${target%:bf16}; precision=bf16 ;; esac
  "$tlmc" lm keys --target "$target" --precision $precision "$here"/bench/workloads/W[1-6].yaml \
    "$here"/bench/unseen/S*.yaml \
    "$models"/resnet50_op17.onnx "$models"/mobilenet_v2_op17.onnx "$models"/bert_op17.onnx
done | while IFS="$tab" read -r key model plan family; do
  printf '%s\t%s\t%s\t%s\n' "$key" "$(basename "$model")" "$plan" "$family"
done | sort -u -t "$tab" -k1,1
