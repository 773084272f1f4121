#include "scheduler/lowering_choices.h"

#include "ir/shape_rules.h"

namespace tlmc::scheduler {

ir::LoweringChoices lowering_choices(const ir::Graph& g, const std::vector<int>& nodes,
                                     const ir::Target& target) {
  ir::LoweringChoices rule;
  if (target.isa == ir::Isa::Generic) return rule;
  const int64_t lanes = target.vector_lanes(4);
  for (int i : nodes) {
    const ir::Node& n = g.nodes.at(static_cast<size_t>(i));
    // A channels-last Conv (the graph's activation layout) is computed channels-last anyway.
    if (n.op != "Conv" || n.attr_int("group") != 1 || ir::is_channels_last(n)) continue;
    const ir::Tensor& w = g.tensor(n.inputs[1]);
    const ir::TensorType out = g.type(n.outputs[0]);
    if (w.kind != ir::TensorKind::Weight || w.type.dtype != ir::DType::Float32 ||
        out.shape.size() < 3)
      continue;
    // Rows of at least half a vector vectorise well along the row itself.
    if (out.shape.back() * 2 < lanes && out.shape[1] >= lanes) rule.channels_last_convs.insert(i);
  }
  return rule;
}

}  // namespace tlmc::scheduler
