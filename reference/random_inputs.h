// The random inputs the reference and the generated code are compared on: floats uniform in
// [-1, 1], integers in [0, bound) where an integer tensor that indexes a Gather stays below
// the extent it indexes. Shared by `tlmc --check`, `--profile` and -O3's measurements.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "ir/graph.h"
#include "reference/interpreter.h"

namespace tlmc::reference {

// The exclusive upper bound for random values of integer tensor `t`: the smallest extent
// it indexes as the indices of a Gather among `nodes` (node ids of `g`), else 4.
int64_t random_integer_bound(const ir::Graph& g, const std::vector<int>& nodes, int t);

// A tensor of `type` drawn from `rng`: float32 uniform in [-1, 1]; bool 0 or 1; other
// integers uniform in [0, int_bound); float16 and bfloat16 bytes of 0 or 1.
HostTensor random_tensor(const ir::TensorType& type, int64_t int_bound, std::mt19937_64& rng);

// One random tensor per input of the whole graph `g`, in order, drawn from a generator
// seeded with `seed` (what `tlmc --check` and `--profile` run the library on).
std::vector<HostTensor> random_graph_inputs(const ir::Graph& g, uint64_t seed);

}  // namespace tlmc::reference
