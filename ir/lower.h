// Lowers a fused subgraph (a set of graph nodes) to a tensor-expression program. Needs a
// verified graph; guarantees a program that passes verify_te, whose inputs are the tensors
// the subgraph reads from outside (in order of first use) and whose outputs are those it
// writes for the outside (graph outputs, or read by nodes outside the set).
#pragma once

#include <set>
#include <vector>

#include "ir/graph.h"
#include "ir/te.h"

namespace tlmc::ir {

struct LoweredSubgraph {
  TeProgram program;
  std::vector<int> input_tensors;   // graph tensor id of each program input
  std::vector<int> output_tensors;  // graph tensor id of each program output
};

// Layout choices made before lowering (scheduler/lowering_choices.h).
struct LoweringChoices {
  // Conv nodes (group 1) computed channels-last, into an [N, spatial..., M] tensor that
  // their epilogue writes out as [N, M, spatial...]: a tile vectorises over output channels.
  std::set<int> channels_last_convs;
  // The subgraph is pointwise convolutions and their epilogue, lowered with the spatial
  // dimensions merged into one (ir/flat_spatial.h): one long row to tile and vectorise.
  bool flat_spatial = false;
  bool operator==(const LoweringChoices& o) const {
    return channels_last_convs == o.channels_last_convs && flat_spatial == o.flat_spatial;
  }
};

LoweredSubgraph lower_subgraph(const Graph& g, const std::vector<int>& node_ids,
                               const LoweringChoices& choices = {});

}  // namespace tlmc::ir
