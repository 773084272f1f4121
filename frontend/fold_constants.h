// Folds what is known at compile time. Nodes whose inputs are all weights, and Shape
// nodes, are evaluated into new weights; a BatchNormalization with constant parameters is folded
// into the weights and bias of the Conv it follows (when it is that Conv's only reader), or else
// becomes a per-channel Mul and Add by constants. Needs a verified graph; returns one.
#pragma once

#include "ir/graph.h"

namespace tlmc::frontend {

ir::Graph fold_constants(const ir::Graph& g);

}  // namespace tlmc::frontend
