#!/bin/sh
# What the bundled model (lm/default_model.tlm) saw of the benchmark units and the unseen
# shapes: `tlmc lm overlap` of W1-W6, ResNet-50, MobileNetV2, BERT-base and bench/unseen/
# against the subgraphs of lm/training_keys.txt. That model predates lineages and corpora
# that record shape families, so its training subgraphs' families are found again from the
# corpus models' `tlmc lm keys` (on every target and precision it was sampled for); keys that
# today's lowering no longer gives are matched by key only, and counted.
#   scripts/lm_bundled_overlap.sh TLMC CORPUS_MODELS ZOO_MODELS [TARGET] > report.txt
# CORPUS_MODELS as scripts/lm_corpus_models.py writes it; ZOO_MODELS as for
# scripts/lm_held_out_keys.sh. Takes about half an hour on 2 cores (most of it `lm keys`).
set -eu
tlmc=$1
corpus_models=$2
zoo=$3
target=${4:-x86-64-avx512}
here=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/trained/sentences"
for t in x86-64 x86-64-avx2 x86-64-avx512 x86-64-avx512-bf16:bf16 x86-64-amx:bf16; do
  precision=fp32
  case $t in *:bf16) t=${t%:bf16}; precision=bf16 ;; esac
  for m in "$corpus_models"/*.onnx "$here"/examples/*.yaml; do
    "$tlmc" lm keys --target "$t" --precision $precision "$m"
  done
done > "$work/all.keys"
grep -v '^#' "$here/lm/training_keys.txt" > "$work/training"
awk -F '\t' 'NR == FNR { t[$1] = 1; next } ($1 in t) && !seen[$1]++' \
  "$work/training" "$work/all.keys" > "$work/trained/sentences/trained.keys"
cut -f1 "$work/trained/sentences/trained.keys" | sort > "$work/found"
sort -u "$work/training" | comm -23 - "$work/found" | sed 's/$/\t\t\t/' \
  >> "$work/trained/sentences/trained.keys"
"$tlmc" lm overlap --corpus "$work/trained" --target "$target" \
  "$here"/bench/workloads/W[1-6].yaml "$zoo"/resnet50_op17.onnx "$zoo"/mobilenet_v2_op17.onnx \
  "$zoo"/bert_op17.onnx "$here"/bench/unseen/S*.yaml
