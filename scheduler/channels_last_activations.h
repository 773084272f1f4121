// Rewrites a verified graph so that its convolutions and pools, and the element-wise
// operators after them, pass their activations channels-last ([N, spatial..., C]) from one
// subgraph to the next, converting only where such a chain meets the rest of the graph.
#pragma once

#include <optional>

#include "ir/graph.h"
#include "ir/shape_rules.h"

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

// The chains of a graph: the nodes the channels-last rewrite moves (those its blocked form
// may move included), grouped by the tensors they pass each other: chains[i] numbers node
// i's chain from 0 in order of first node, -1 for a node no rewrite moves. Chains meet only
// through nodes that stay, so each may take its own layout.
std::vector<int> activation_chains(const ir::Graph& g);
// The number of chains activation_chains numbered.
size_t chain_count(const std::vector<int>& chains);

// A rewritten graph, and the chain of each of its nodes (a conversion's is that of the node
// it converts for; -1 outside every chain).
struct LayoutRewrite {
  ir::Graph graph;
  std::vector<int> chain_of_node;
};

// The graph with chain c (of `chains`, activation_chains' numbering) in layouts[c]; a
// channels-first layout leaves a chain as it is. std::nullopt when no node moves.
std::optional<LayoutRewrite> activations_in(const ir::Graph& g, const std::vector<int>& chains,
                                            const std::vector<ir::ChannelLayout>& layouts);

}  // namespace tlmc::scheduler
