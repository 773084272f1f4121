// Merges the spatial dimensions of a subgraph made of pointwise convolutions (1x1 kernel,
// stride 1, no padding) and their elementwise epilogue into one: [N, C, H, W] becomes
// [N, C, 1, H*W] (channels-last: [N, 1, H*W, C]), the same bytes in the same order.
#pragma once

#include <optional>
#include <vector>

#include "ir/graph.h"

namespace tlmc::ir {

// A copy of g whose tensors read or written by `nodes` have their spatial dimensions merged
// into the last one, or nullopt when the subgraph is not only pointwise convolutions (at
// least one, all of one spatial shape and layout) and elementwise operators whose every
// operand has either those spatial extents or 1 in each spatial dimension.
std::optional<Graph> flatten_spatial(const Graph& g, const std::vector<int>& nodes);

}  // namespace tlmc::ir
