// The lowerings a subgraph may take, one per layout choice, decided before lowering. A
// convolution (group 1, constant float weights) may be computed channels-last, vectorised
// over output channels; -O0 takes the fixed rule's variant (the first), -O3 measures each.
#pragma once

#include <vector>

#include "ir/graph.h"
#include "ir/lower.h"
#include "ir/target.h"

namespace tlmc::scheduler {

// The first variant is the -O0 rule's: channels-last when output rows are shorter than
// half a vector and there are at least a vector's output channels. The second, where
// some convolution may go either way, flips every such one.
std::vector<ir::LoweringChoices> layout_variants(const ir::Graph& g, const std::vector<int>& nodes,
                                                 const ir::Target& target);

}  // namespace tlmc::scheduler
