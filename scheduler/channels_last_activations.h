// Rewrites a verified graph so that its convolutions and pools, and the element-wise
// operators after them, pass their activations channels-last ([N, spatial..., C]) from one
// subgraph to the next, converting only where such a chain meets the rest of the graph.
#pragma once

#include <optional>

#include "ir/graph.h"

namespace tlmc::scheduler {

// The graph with every Conv, MaxPool (one output), AveragePool and GlobalAveragePool
// channels-last (tlmc's attribute channels_last = 1), and every element-wise operator
// (BatchNormalization aside) that reads one of their results with its broadcast operands
// made channels-last too: constants moved at compile time, other tensors by a Transpose
// (a Reshape where no element moves). The graph's inputs and outputs keep the model's
// layout. std::nullopt when the graph has no such operator. The result is verified.
std::optional<ir::Graph> channels_last_activations(const ir::Graph& g);

// The same with the channels in blocks of `block` instead ([N, C/B, spatial..., B]: tlmc's
// attribute channel_block = B). A Conv or pool whose input or output channels are not whole
// blocks keeps the model's layout. A conversion is a Transpose between two Reshapes, or a
// Reshape alone where no element moves.
std::optional<ir::Graph> blocked_activations(const ir::Graph& g, int64_t block);

}  // namespace tlmc::scheduler
