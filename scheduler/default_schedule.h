// The -O0 schedule of a subgraph, written in the decision vocabulary: pointwise producers
// inlined, the anchor's result cached and computed per output tile, the tile loops fused and
// run in parallel, the innermost loop vectorised. Every decision is checked as it is made.
#pragma once

#include <vector>

#include "ir/target.h"
#include "ir/te.h"
#include "scheduler/decision.h"

namespace tlmc::scheduler {

std::vector<Decision> default_schedule(const ir::TeProgram& program, const ir::Target& target);

}  // namespace tlmc::scheduler
