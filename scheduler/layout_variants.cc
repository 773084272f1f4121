#include "scheduler/layout_variants.h"

namespace tlmc::scheduler {

std::vector<ir::LoweringChoices> layout_variants(const ir::Graph& g, const std::vector<int>& nodes,
                                                 const ir::Target& target) {
  ir::LoweringChoices rule, flipped;
  if (target.isa == ir::Isa::Generic) return {rule};
  const int64_t lanes = target.vector_lanes(4);
  for (int i : nodes) {
    const ir::Node& n = g.nodes.at(static_cast<size_t>(i));
    if (n.op != "Conv" || n.attr_int("group") != 1) continue;
    const ir::Tensor& w = g.tensor(n.inputs[1]);
    const ir::TensorType out = g.type(n.outputs[0]);
    if (w.kind != ir::TensorKind::Weight || w.type.dtype != ir::DType::Float32 ||
        out.shape.size() < 3)
      continue;
    // Rows of at least half a vector vectorise well along the row itself.
    const bool channels_last = out.shape.back() * 2 < lanes && out.shape[1] >= lanes;
    (channels_last ? rule : flipped).channels_last_convs.insert(i);
  }
  if (rule == flipped) return {rule};
  return {rule, flipped};
}

}  // namespace tlmc::scheduler
