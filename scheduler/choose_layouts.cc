#include "scheduler/choose_layouts.h"

#include <cstring>

namespace tlmc::scheduler {

ir::LoweringChoices choose_layouts(ir::Graph& g, const ir::Target& target) {
  ir::LoweringChoices choices;
  if (target.isa == ir::Isa::Generic) return choices;
  const int64_t lanes = target.vector_lanes(4);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (n.op != "Conv" || n.attr_int("group") != 1) continue;
    const ir::Tensor& w = g.tensor(n.inputs[1]);
    const ir::TensorType out = g.type(n.outputs[0]);
    if (w.kind != ir::TensorKind::Weight || w.type.dtype != ir::DType::Float32 ||
        out.shape.size() < 3)
      continue;
    // Rows of at least half a vector vectorise well along the row itself.
    if (out.shape.back() * 2 >= lanes || out.shape[1] < lanes) continue;
    // [M, C, k...] -> [C, k..., M]
    const ir::Shape& ws = w.type.shape;
    const int64_t m = ws[0], rest = w.type.numel() / m;
    std::vector<float> src(static_cast<size_t>(w.type.numel())), packed(src.size());
    std::memcpy(src.data(), w.data->data(), src.size() * 4);
    for (int64_t a = 0; a < m; ++a)
      for (int64_t j = 0; j < rest; ++j)
        packed[static_cast<size_t>(j * m + a)] = src[static_cast<size_t>(a * rest + j)];
    ir::Tensor t;
    t.name = w.name + ".channels_last";
    for (int k = 2; g.find_tensor(t.name) >= 0; ++k)
      t.name = w.name + ".channels_last." + std::to_string(k);
    t.kind = ir::TensorKind::Weight;
    t.type.dtype = ir::DType::Float32;
    t.type.shape = ir::Shape(ws.begin() + 1, ws.end());
    t.type.shape.push_back(m);
    t.data = ir::float_bytes(packed);
    t.loc = w.loc;
    g.tensors.push_back(t);
    choices.channels_last_weights[static_cast<int>(i)] = static_cast<int>(g.tensors.size()) - 1;
  }
  return choices;
}

}  // namespace tlmc::scheduler
