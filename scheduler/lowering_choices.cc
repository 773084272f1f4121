#include "scheduler/lowering_choices.h"

#include <algorithm>

#include "ir/flat_spatial.h"
#include "ir/shape_rules.h"

namespace tlmc::scheduler {
namespace {

// Whether a node of the subgraph computes in tlmc's channels-last or blocked layout.
bool in_own_layout(const ir::Graph& g, const std::vector<int>& nodes) {
  return std::any_of(nodes.begin(), nodes.end(), [&](int i) {
    return !ir::channel_layout(g.nodes.at(static_cast<size_t>(i))).channels_first();
  });
}

}  // namespace

ir::LoweringChoices lowering_choices(const ir::Graph& g, const std::vector<int>& nodes,
                                     const ir::Target& target) {
  ir::LoweringChoices rule;
  const std::optional<ir::Graph> flat =
      in_own_layout(g, nodes) ? std::nullopt : ir::flatten_spatial(g, nodes);
  rule.flat_spatial = flat.has_value();
  if (target.isa == ir::Isa::Generic) return rule;
  // The rows as they will be lowered: merged ones are long.
  const ir::Graph& lowered = flat ? *flat : g;
  const int64_t lanes = target.vector_lanes(4);
  for (int i : nodes) {
    const ir::Node& n = lowered.nodes.at(static_cast<size_t>(i));
    // A channels-last or blocked Conv (the graph's activation layout) keeps its layout.
    if (n.op != "Conv" || n.attr_int("group") != 1 || !ir::channel_layout(n).channels_first())
      continue;
    const ir::Tensor& w = lowered.tensor(n.inputs[1]);
    const ir::TensorType out = lowered.type(n.outputs[0]);
    if (w.kind != ir::TensorKind::Weight || w.type.dtype != ir::DType::Float32 ||
        out.shape.size() < 3)
      continue;
    // Rows of at least half a vector vectorise well along the row itself.
    if (out.shape.back() * 2 < lanes && out.shape[1] >= lanes) rule.channels_last_convs.insert(i);
  }
  return rule;
}

}  // namespace tlmc::scheduler
