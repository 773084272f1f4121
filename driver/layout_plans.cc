#include "driver/layout_plans.h"

#include <map>
#include <ostream>

#include "ir/te.h"
#include "scheduler/channels_last_activations.h"
#include "scheduler/lowering_choices.h"

namespace tlmc::driver {

SplitModel split_model(const ir::Graph& graph, const ir::Target& target, ActivationLayout layout,
                       std::ostream* log) {
  // The model's own layout, and, when it has convolutions or pools, channels-last between
  // them (on a vector target, unless the user asked for one). -O3 tunes the subgraphs of
  // all; the records decide, else -O0's rule: channels-last when there is a dense
  // convolution.
  SplitModel m;
  std::vector<LayoutPlan>& plans = m.plans;
  if (layout == ActivationLayout::ChannelsLast ||
      (layout == ActivationLayout::Auto && target.isa != ir::Isa::Generic)) {
    if (std::optional<ir::Graph> cl = scheduler::channels_last_activations(graph))
      plans.push_back(LayoutPlan{"channels-last", true, false, std::move(*cl), {}, {}});
    else if (layout == ActivationLayout::ChannelsLast && log)
      *log << "tlmc: note: no convolution or pool to compute channels-last; "
              "the model's layout it is\n";
  }
  if (layout == ActivationLayout::Blocked) {
    // Blocks of one vector of float32 (the channels of a position: the vector a convolution's
    // register tile accumulates).
    const int64_t block = target.vector_lanes(4);
    std::optional<ir::Graph> blocked;
    if (block > 1) blocked = scheduler::blocked_activations(graph, block);
    if (blocked)
      plans.push_back(LayoutPlan{"blocked", false, true, std::move(*blocked), {}, {}});
    else if (log)
      *log << "tlmc: note: no convolution or pool whose channels are whole blocks of " << block
           << (block > 1 ? "" : " (the target has no vectors)") << "; the model's layout it is\n";
  }
  if ((layout != ActivationLayout::ChannelsLast && layout != ActivationLayout::Blocked) ||
      plans.empty())
    plans.insert(plans.begin(), LayoutPlan{"model layout", false, false, graph, {}, {}});

  // Each distinct subgraph (by workload key) is lowered, scheduled and compiled once.
  std::map<std::string, int> kernel_of_key;
  for (size_t p = 0; p < plans.size(); ++p) {
    LayoutPlan& plan = plans[p];
    // Fused subgraphs; views share storage (after verification: shapes are known).
    plan.partition = scheduler::partition_graph(plan.graph);
    for (const std::vector<int>& nodes : plan.partition.subgraphs) {
      ir::LoweredSubgraph lowered = ir::lower_subgraph(
          plan.graph, nodes, scheduler::lowering_choices(plan.graph, nodes, target));
      Occurrence occurrence{nodes, 0, lowered.input_tensors};
      occurrence.params.insert(occurrence.params.end(), lowered.output_tensors.begin(),
                               lowered.output_tensors.end());
      const std::string key = ir::workload_key(lowered.program);
      auto [found, added] = kernel_of_key.emplace(key, static_cast<int>(m.distinct.size()));
      if (added)
        m.distinct.push_back(Distinct{key, static_cast<int>(p), nodes, std::move(lowered),
                                      std::vector<int>(plans.size(), 0)});
      ++m.distinct[static_cast<size_t>(found->second)].occurrences[p];
      occurrence.distinct = found->second;
      plan.occurrences.push_back(std::move(occurrence));
    }
  }
  return m;
}

}  // namespace tlmc::driver
