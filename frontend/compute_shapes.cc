#include "frontend/compute_shapes.h"

#include <algorithm>
#include <map>
#include <string>

#include "ir/diagnostic.h"
#include "ir/graph_verify.h"
#include "reference/interpreter.h"

namespace tlmc::frontend {
namespace {

// Integer and bool results of constant inputs are shape arithmetic (or masks) as far as
// models go; float ones are left to fold_constants, which runs later and whose folding
// --check verifies. Either way no result larger than this is computed here.
constexpr size_t kMaxComputedBytes = 64u << 20;

bool computes_a_shape(const ir::Graph& g, const ir::Node& n) {
  size_t bytes = 0;
  for (int out : n.outputs) {
    if (out < 0) continue;
    if (ir::dtype_is_float(g.type(out).dtype)) return false;
    bytes += g.type(out).bytes();
  }
  if (bytes > kMaxComputedBytes) return false;
  if (n.op == "Shape") return true;
  return std::all_of(n.inputs.begin(), n.inputs.end(),
                     [&](int in) { return in < 0 || g.tensor(in).kind == ir::TensorKind::Weight; });
}

bool is_product(const ir::Node& n) { return n.op == "MatMul" || n.op == "Gemm" || n.op == "Conv"; }

// A model's own product of 16-bit operands (ONNX's: its output of their type).
bool is_half_product(const ir::Graph& g, const ir::Node& n) {
  return is_product(n) && ir::dtype_is_half(g.type(n.inputs[0]).dtype) &&
         n.attr_int("float32_output") == 0;
}

// The model's own products of 16-bit operands as tlmc computes them, accumulating in
// float32, then rounded to their type as ONNX has them: one of bfloat16 operands reads them
// as they are (float32_output, as --precision bf16 writes, so that the bf16 unit computes
// it where the target has one); one of float16 operands reads them widened to float32 by a
// Cast each (no float16 unit: tlmc computes float16 models' products in float32). A bias
// is widened either way, and a Cast back to the 16-bit type gives the product's output.
ir::Graph with_float32_products(ir::Graph g) {
  std::vector<ir::Node> nodes;
  std::map<int, int> widened;  // 16-bit tensor -> its float32 copy
  const auto add_tensor = [&](const ir::Tensor& like, const std::string& suffix) {
    ir::Tensor t;
    t.name = ir::unused_tensor_name(g, like.name + suffix);
    t.type = {ir::DType::Float32, like.type.shape};
    t.loc = like.loc;
    t.kind = ir::TensorKind::Intermediate;
    g.tensors.push_back(t);
    return static_cast<int>(g.tensors.size()) - 1;
  };
  for (ir::Node n : g.nodes) {
    if (!is_half_product(g, n)) {
      nodes.push_back(std::move(n));
      continue;
    }
    const ir::DType half = g.type(n.inputs[0]).dtype;
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int t = n.inputs[i];
      if (t < 0 || (i < 2 && half == ir::DType::BFloat16)) continue;
      auto known = widened.find(t);
      if (known == widened.end()) {
        const int copy = add_tensor(g.tensor(t), ".f32");
        nodes.push_back(
            ir::float_cast_node(g.tensor(copy).name, t, copy, ir::DType::Float32, n.loc));
        known = widened.emplace(t, copy).first;
      }
      n.inputs[i] = known->second;
    }
    if (half == ir::DType::BFloat16) n.attrs["float32_output"] = ir::Attr{int64_t{1}, n.loc};
    const int result = n.outputs[0];
    const int accumulated = add_tensor(g.tensor(result), ".f32");
    n.outputs[0] = accumulated;
    const std::string name = n.name.empty() ? g.tensor(result).name : n.name;
    const SourceLoc loc = n.loc;
    nodes.push_back(std::move(n));
    nodes.push_back(ir::float_cast_node(name + ".round", accumulated, result, half, loc));
  }
  g.nodes = std::move(nodes);
  return g;
}

}  // namespace

ir::Graph verify_computing_shapes(ir::Graph g) {
  const auto computed = [](const ir::Graph& graph, const ir::Node& n) {
    std::vector<std::vector<uint8_t>> values;
    if (!computes_a_shape(graph, n)) return values;
    for (reference::HostTensor& v : reference::evaluate_constant_node(graph, n))
      values.push_back(std::move(v.bytes));
    return values;
  };
  ir::Graph out = ir::verify_graph(std::move(g), computed);
  if (std::none_of(out.nodes.begin(), out.nodes.end(),
                   [&](const ir::Node& n) { return is_half_product(out, n); }))
    return out;
  return ir::verify_graph(with_float32_products(std::move(out)), computed);
}
}  // namespace tlmc::frontend
