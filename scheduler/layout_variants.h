// The lowerings a subgraph may take, one per layout choice, decided before lowering; the
// driver tunes each as a task and compiles the fastest. Today one: the -O0 rule's. (The
// channels-last alternative is a layout of the whole graph's activations instead:
// scheduler/channels_last_activations.h.)
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/lower.h"
#include "ir/target.h"

namespace tlmc::scheduler {

// The first variant is the -O0 rule's: a convolution (group 1, constant float weights) in
// the model's layout is computed channels-last, vectorised over output channels, when its
// output rows are shorter than half a vector and it has at least a vector's channels.
std::vector<ir::LoweringChoices> layout_variants(const ir::Graph& g, const std::vector<int>& nodes,
                                                 const ir::Target& target);

}  // namespace tlmc::scheduler
