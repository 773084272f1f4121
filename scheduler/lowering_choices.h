// How a subgraph is lowered, decided before lowering and the same at every level (one
// program, one workload key): merged spatial rows, convolutions computed channels-last
// inside. The layout between subgraphs: scheduler/channels_last_activations.h.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/lower.h"
#include "ir/target.h"

namespace tlmc::scheduler {

// Pointwise convolutions in the model's layout and their epilogue see their spatial
// dimensions merged into one row (1.3-4.9x on ResNet's 1x1 convolutions after 96 trials;
// channels-last ones, whose rows are the channels, gained and lost as much: left alone).
// A convolution (group 1, constant float weights) in the model's layout is computed
// channels-last, vectorised over output channels, when its output rows (as lowered) are
// shorter than half a vector and it has at least a vector's channels.
ir::LoweringChoices lowering_choices(const ir::Graph& g, const std::vector<int>& nodes,
                                     const ir::Target& target);

}  // namespace tlmc::scheduler
