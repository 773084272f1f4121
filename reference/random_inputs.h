// What random inputs the reference and the generated code are compared on may hold: an
// integer tensor that indexes a Gather stays below the extent it indexes, so that every
// drawn index is valid. Shared by `tlmc --check` and the checks of -O3's measurements.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace tlmc::reference {

// The exclusive upper bound for random values of integer tensor `t`: the smallest extent
// it indexes as the indices of a Gather among `nodes` (node ids of `g`), else 4.
int64_t random_integer_bound(const ir::Graph& g, const std::vector<int>& nodes, int t);

}  // namespace tlmc::reference
