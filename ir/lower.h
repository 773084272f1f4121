// Lowers a fused subgraph (a set of graph nodes) to a tensor-expression program. Needs a
// verified graph; guarantees a program that passes verify_te, whose inputs are the tensors
// the subgraph reads from outside (in order of first use) and whose outputs are those it
// writes for the outside (graph outputs, or read by nodes outside the set).
#pragma once

#include <map>
#include <vector>

#include "ir/graph.h"
#include "ir/te.h"

namespace tlmc::ir {

struct LoweredSubgraph {
  TeProgram program;
  std::vector<int> input_tensors;   // graph tensor id of each program input
  std::vector<int> output_tensors;  // graph tensor id of each program output
};

// Layout choices made for the whole graph before lowering (scheduler/choose_layouts.h).
struct LoweringChoices {
  // Conv node id -> a weight tensor holding the Conv's weights channels-last, [C/group,
  // k..., M]: the convolution is then computed per tile vectorised over output channels.
  std::map<int, int> channels_last_weights;
};

LoweredSubgraph lower_subgraph(const Graph& g, const std::vector<int>& node_ids,
                               const LoweringChoices& choices = {});

}  // namespace tlmc::ir
