// The activation layouts a model may run in (its own; channels-last between convolutions and
// pools on a vector target) and its distinct subgraphs over all of them, each lowered once:
// what -O3 tunes, what the build chooses among, and what the language model's corpus holds.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "driver/compile.h"
#include "ir/graph.h"
#include "ir/lower.h"
#include "ir/target.h"
#include "scheduler/partition.h"

namespace tlmc::driver {

// A distinct subgraph: lowered once, compiled into one kernel that all its occurrences
// call.
struct Distinct {
  std::string key;               // workload key of `lowered`
  int plan = 0;                  // the layout plan whose graph `nodes` are of
  std::vector<int> nodes;        // of its first occurrence
  ir::LoweredSubgraph lowered;   // of its first occurrence
  std::vector<int> occurrences;  // per layout plan
};

// One occurrence of a distinct subgraph: the graph tensors of its kernel's parameters.
struct Occurrence {
  std::vector<int> nodes;
  int distinct;
  std::vector<int> params;  // inputs, then outputs
};

// One activation layout of the whole model: its graph, split into subgraphs.
struct LayoutPlan {
  std::string name;            // for messages
  bool channels_last = false;  // else the model's own layout, or blocked channels
  bool blocked = false;
  ir::Graph graph;
  scheduler::Partition partition;
  std::vector<Occurrence> occurrences;
};

struct SplitModel {
  std::vector<LayoutPlan> plans;  // the model's layout first, unless channels-last was asked
  std::vector<Distinct> distinct;
};

// `graph` folded (frontend/fold_constants.h); notes go to `log` when not null.
SplitModel split_model(const ir::Graph& graph, const ir::Target& target, ActivationLayout layout,
                       std::ostream* log);

}  // namespace tlmc::driver
