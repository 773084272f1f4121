// A measurement task: one distinct subgraph, lowered, with the data every candidate schedule
// is checked on: its inputs (weights as they are, other inputs random) and the outputs the
// reference interpreter computes from them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/lower.h"
#include "reference/interpreter.h"

namespace tlmc::tune {

struct MeasureTask {
  std::string workload_key;
  std::string description;  // its operators and shapes, for people (describe_nodes)
  ir::TeProgram program;
  std::vector<reference::HostTensor> inputs;    // one per kernel input, in parameter order
  std::vector<reference::HostTensor> expected;  // one per kernel output, in parameter order
  double flops = 0;                             // floating-point operations of one run
};

// The operators of `nodes` of `g` as a person reads them: each product with its shape
// ("MatMul 128x768x3072", "Conv 3x3/2 64->128 28x28"; batched products "(x12)"), then the
// other operators once each in order ("+ Add + Erf + Mul"), Casts left out.
std::string describe_nodes(const ir::Graph& g, const std::vector<int>& nodes);

// `seed` draws the random inputs: floats uniform in [-1, 1], integers in [0, 4) or, for
// indices of a Gather, over the valid indices.
MeasureTask make_measure_task(const ir::Graph& g, const std::vector<int>& nodes,
                              const ir::LoweredSubgraph& lowered, uint64_t seed);

// Operations of one run of a program: two per multiply-add of a reduction, one per element
// of a pointwise stage.
double program_flops(const ir::TeProgram& p);

}  // namespace tlmc::tune
