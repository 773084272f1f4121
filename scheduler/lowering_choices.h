// How a subgraph is lowered, decided before lowering and the same at every level (one
// program, one workload key): which of its convolutions in the model's layout compute
// channels-last inside. The layout between subgraphs: scheduler/channels_last_activations.h.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/lower.h"
#include "ir/target.h"

namespace tlmc::scheduler {

// A convolution (group 1, constant float weights) in the model's layout is computed
// channels-last, vectorised over output channels, when its output rows are shorter than
// half a vector and it has at least a vector's channels.
ir::LoweringChoices lowering_choices(const ir::Graph& g, const std::vector<int>& nodes,
                                     const ir::Target& target);

}  // namespace tlmc::scheduler
