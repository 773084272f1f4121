#include "frontend/compute_shapes.h"

#include <algorithm>

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

}  // namespace

ir::Graph verify_computing_shapes(ir::Graph g) {
  ir::Graph out = ir::verify_graph(std::move(g), [](const ir::Graph& graph, const ir::Node& n) {
    std::vector<std::vector<uint8_t>> values;
    if (!computes_a_shape(graph, n)) return values;
    for (reference::HostTensor& v : reference::evaluate_constant_node(graph, n))
      values.push_back(std::move(v.bytes));
    return values;
  });
  // tlmc's products of 16-bit operands output float32 (what --precision bf16 writes); ONNX's
  // output their operands' type, which a model's own products would expect.
  for (const ir::Node& n : out.nodes)
    if ((n.op == "MatMul" || n.op == "Gemm" || n.op == "Conv") &&
        ir::dtype_is_half(out.type(n.inputs[0]).dtype))
      throw Diagnostic(n.loc, n.describe() + " multiplies " +
                                  std::string(ir::dtype_name(out.type(n.inputs[0]).dtype)) +
                                  " tensors: products of float16 or bfloat16 models are not "
                                  "supported yet (--precision bf16 computes a float32 model's "
                                  "products in bfloat16)");
  return out;
}

}  // namespace tlmc::frontend
