#!/bin/sh
# Writes the workload keys of every subgraph a bundled language model was trained on
# (lm/training_keys.txt for the CPU model, lm/cuda_training_keys.txt for the CUDA model):
# those `tlmc lm sample` put in CORPUS, on every target it was sampled for. Demonstrations
# (`tlmc lm demonstrate`) are drawn from the same subgraphs.
#   scripts/lm_training_keys.sh CORPUS > lm/training_keys.txt
set -eu
echo "# A bundled model's training subgraphs: written by scripts/lm_training_keys.sh"
cut -f1 "$1"/sentences/*.keys | sort -u
