// How a subgraph is lowered, decided before lowering: today, which of its convolutions in
// the model's layout are computed channels-last. The same choice at every level, so that a
// subgraph has one program and one workload key. (The activation layout between subgraphs
// is a choice of the whole graph instead: scheduler/channels_last_activations.h.)
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
