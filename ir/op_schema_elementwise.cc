// Shape inference of the element-wise operators: activations, Clip and the binary
// arithmetic operators with numpy (multidirectional) broadcasting.
#include <string>

#include "ir/op_schema_parts.h"
#include "ir/shape_rules.h"

namespace tlmc::ir {
namespace {

std::vector<TensorType> infer_unary(const Graph& g, const Node& n) {
  require_float32_inputs(g, n);
  return {input_type(g, n, 0)};
}

std::vector<TensorType> infer_binary(const Graph& g, const Node& n) {
  require_float32_inputs(g, n);
  const Shape& a = input_type(g, n, 0).shape;
  const Shape& b = input_type(g, n, 1).shape;
  std::optional<Shape> out = broadcast_shapes(a, b);
  if (!out) fail_node(n, "cannot broadcast " + shape_str(a) + " with " + shape_str(b));
  return {{DType::Float32, *out}};
}

// Clip's min (input 1) and max (input 2) are optional inputs since opset 11; tlmc needs them
// to be scalar constants.
std::vector<TensorType> infer_clip(const Graph& g, const Node& n) {
  require_float32_inputs(g, n);
  static const char* const kNames[] = {"input", "min", "max"};
  for (size_t i = 1; i < 3; ++i) {
    if (!has_input(n, i)) continue;
    const Tensor& bound = g.tensor(n.inputs[i]);
    if (bound.kind != TensorKind::Weight || !bound.data)
      fail_node(n, "needs its " + std::string(kNames[i]) + " '" + bound.name +
                       "' to be a constant weight");
    if (bound.type.shape.size() > 1 || bound.type.numel() != 1)
      fail_node(n, "needs its " + std::string(kNames[i]) + " '" + bound.name +
                       "' to be a scalar, got shape " + shape_str(bound.type.shape));
  }
  return {input_type(g, n, 0)};
}

OpSchema unary(const std::string& name, int since_opset, std::vector<AttrSpec> attrs = {}) {
  return make_schema(name, {1, 1}, {1, 1}, OpClass::Elementwise, since_opset, std::move(attrs),
                     infer_unary);
}

OpSchema binary(const std::string& name, int since_opset) {
  return make_schema(name, {2, 2}, {1, 1}, OpClass::Elementwise, since_opset, {}, infer_binary);
}

}  // namespace

std::vector<OpSchema> elementwise_op_schemas() {
  return {
      unary("Relu", 6),
      unary("LeakyRelu", 6, {float_attr("alpha", 0.01)}),
      make_schema("Clip", {1, 3}, {1, 1}, OpClass::Elementwise, 13, {}, infer_clip),
      unary("Sigmoid", 13),
      unary("Tanh", 13),
      unary("Erf", 13),
      unary("Exp", 13),
      unary("Sqrt", 13),
      binary("Pow", 7),
      binary("Add", 7),
      binary("Sub", 7),
      binary("Mul", 7),
      binary("Div", 7),
  };
}

}  // namespace tlmc::ir
