// Layout choices for the whole graph, made before lowering. A convolution with constant
// weights and output rows shorter than a vector gets its weights packed channels-last (a
// new weight tensor added to the graph), so that it vectorises over output channels.
#pragma once

#include "ir/graph.h"
#include "ir/lower.h"
#include "ir/target.h"

namespace tlmc::scheduler {

ir::LoweringChoices choose_layouts(ir::Graph& g, const ir::Target& target);

}  // namespace tlmc::scheduler
