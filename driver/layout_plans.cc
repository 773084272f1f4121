#include "driver/layout_plans.h"

#include <algorithm>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "ir/te.h"
#include "scheduler/channels_last_activations.h"
#include "scheduler/lowering_choices.h"

namespace tlmc::driver {

void add_plan(SplitModel& m, LayoutPlan plan, const ir::Target& target) {
  const size_t p = m.plans.size();
  for (Distinct& d : m.distinct) d.occurrences.resize(p + 1, 0);
  // Fused subgraphs; views share storage (after verification: shapes are known).
  plan.partition = scheduler::partition_graph(plan.graph, plan.fuse_conversions);
  for (const std::vector<int>& nodes : plan.partition.subgraphs) {
    ir::LoweredSubgraph lowered = ir::lower_subgraph(
        plan.graph, nodes, scheduler::lowering_choices(plan.graph, nodes, target));
    Occurrence occurrence{nodes, 0, lowered.input_tensors};
    occurrence.params.insert(occurrence.params.end(), lowered.output_tensors.begin(),
                             lowered.output_tensors.end());
    const std::string key = ir::workload_key(lowered.program);
    auto found = std::find_if(m.distinct.begin(), m.distinct.end(),
                              [&](const Distinct& d) { return d.key == key; });
    if (found == m.distinct.end()) {
      m.distinct.push_back(Distinct{key, static_cast<int>(p), nodes, std::move(lowered),
                                    std::vector<int>(p + 1, 0)});
      found = m.distinct.end() - 1;
    }
    ++found->occurrences[p];
    occurrence.distinct = static_cast<int>(found - m.distinct.begin());
    plan.occurrences.push_back(std::move(occurrence));
  }
  m.plans.push_back(std::move(plan));
}

SplitModel split_model(const ir::Graph& graph, const ir::Target& target, ActivationLayout layout,
                       std::ostream* log) {
  // The model's own layout, and, when it has convolutions or pools, channels-last and
  // blocked channels between them (on a vector target, unless the user asked for one
  // layout). -O3 tunes the subgraphs of all; the records decide (compile.cc may add a plan
  // mixing them chain by chain), else -O0's rule: channels-last when there is a dense
  // convolution.
  const std::vector<int> chains = scheduler::activation_chains(graph);
  std::vector<LayoutPlan> plans;
  // A plan of every chain in layout l, named `name`, when it moves any node.
  auto add_in = [&](ir::ChannelLayout l, const char* name) {
    std::optional<scheduler::LayoutRewrite> r = scheduler::activations_in(
        graph, chains, std::vector<ir::ChannelLayout>(scheduler::chain_count(chains), l));
    if (r)
      plans.push_back(
          LayoutPlan{name, l, std::move(r->graph), std::move(r->chain_of_node), {}, {}, false});
    return r.has_value();
  };
  const bool vectors = target.isa != ir::Isa::Generic;
  if (layout == ActivationLayout::ChannelsLast || (layout == ActivationLayout::Auto && vectors)) {
    ir::ChannelLayout last;
    last.last = true;
    if (!add_in(last, "channels-last") && layout == ActivationLayout::ChannelsLast && log)
      *log << "tlmc: note: no convolution or pool to compute channels-last; "
              "the model's layout it is\n";
  }
  if (layout == ActivationLayout::Blocked || (layout == ActivationLayout::Auto && vectors)) {
    // Blocks of one vector of float32 (the channels of a position: the vector a convolution's
    // register tile accumulates).
    const int64_t lanes = target.vector_lanes(4);
    ir::ChannelLayout blocked;
    blocked.block = lanes > 1 ? lanes : 0;
    if (!(blocked.block && add_in(blocked, "blocked")) && layout == ActivationLayout::Blocked &&
        log)
      *log << "tlmc: note: no convolution or pool whose channels are whole blocks"
           << (blocked.block ? " of " + std::to_string(blocked.block) : " (no vectors)")
           << "; the model's layout it is\n";
  }
  if ((layout != ActivationLayout::ChannelsLast && layout != ActivationLayout::Blocked) ||
      plans.empty())
    plans.insert(plans.begin(), LayoutPlan{kModelLayout, {}, graph, chains, {}, {}, false});

  // Each distinct subgraph (by workload key) is lowered, scheduled and compiled once. A plan
  // with conversions has a twin computing them in their readers' loads; which is faster
  // depends on the reader (a dense convolution broadcasts the input it reads, a depthwise
  // one loads vectors of it, which a conversion turns into gathers), so -O3 times both.
  SplitModel m;
  for (LayoutPlan& plan : plans) {
    std::optional<LayoutPlan> fused;
    if (plan.layout.last || plan.layout.block) {
      fused = plan;
      fused->name += " (conversions fused)";
      fused->fuse_conversions = true;
    }
    add_plan(m, std::move(plan), target);
    if (fused && scheduler::partition_graph(fused->graph, true).subgraphs !=
                     m.plans.back().partition.subgraphs)
      add_plan(m, std::move(*fused), target);
  }
  return m;
}

}  // namespace tlmc::driver
