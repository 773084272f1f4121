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
#include "ir/shape_rules.h"
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

// The name of the plan in the model's own layout throughout.
inline constexpr const char* kModelLayout = "model layout";

// One activation layout of the model: its graph, split into subgraphs. Each chain of
// convolutions and pools (scheduler::activation_chains of the model's graph) is in one
// layout; a plan built from the tuning records may mix them.
struct LayoutPlan {
  std::string name;  // for messages
  // Every chain's layout; channels-first for the model's own and for a plan that mixes them.
  ir::ChannelLayout layout;
  ir::Graph graph;
  std::vector<int> chain_of_node;  // of graph's nodes (-1 outside every chain)
  scheduler::Partition partition;
  std::vector<Occurrence> occurrences;
  // Conversions into a convolution's or pool's layout computed in its loads
  // (scheduler::partition_graph): a plan of its own beside the one with conversion kernels.
  bool fuse_conversions = false;
};

struct SplitModel {
  std::vector<LayoutPlan> plans;  // the model's layout first, unless channels-last was asked
  std::vector<Distinct> distinct;
};

// `graph` folded (frontend/fold_constants.h); notes go to `log` when not null.
SplitModel split_model(const ir::Graph& graph, const ir::Target& target, ActivationLayout layout,
                       std::ostream* log);

// Partitions and lowers `plan` into m: its subgraphs join m.distinct (by workload key) and
// every distinct subgraph counts its occurrences in the new plan, the last of m.plans.
void add_plan(SplitModel& m, LayoutPlan plan, const ir::Target& target);

}  // namespace tlmc::driver
