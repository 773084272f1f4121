// Shape inference of the element-wise operators: activations, Clip, Cast, the arithmetic,
// comparison and logical operators and Where, with numpy (multidirectional) broadcasting.
#include <string>

#include "ir/op_schema_parts.h"
#include "ir/shape_rules.h"

namespace tlmc::ir {
namespace {

// The broadcast shape of the inputs from `first` on: "cannot broadcast [2, 3] with [2]" names
// the shape of the inputs before the one that does not fit, and that input's.
Shape broadcast_inputs(const Graph& g, const Node& n, size_t first = 0) {
  Shape out = input_type(g, n, first).shape;
  for (size_t i = first + 1; i < n.inputs.size(); ++i) {
    const Shape& s = input_type(g, n, i).shape;
    std::optional<Shape> b = broadcast_shapes(out, s);
    if (!b) fail_node(n, "cannot broadcast " + shape_str(out) + " with " + shape_str(s));
    out = *b;
  }
  return out;
}

std::vector<TensorType> infer_unary(const Graph& g, const Node& n) {
  require_float32_inputs(g, n);
  return {input_type(g, n, 0)};
}

// Neg, Abs: float32 and the signed integers.
std::vector<TensorType> infer_numeric_unary(const Graph& g, const Node& n) {
  require_input_dtype(g, n, 0, kNumericDTypes);
  return {input_type(g, n, 0)};
}

// Pow: float32 only.
std::vector<TensorType> infer_binary(const Graph& g, const Node& n) {
  require_float32_inputs(g, n);
  return {{DType::Float32, broadcast_inputs(g, n)}};
}

// Add, Sub, Mul, Div, Max, Min: float32 or integers (shape arithmetic), one dtype for all;
// Max and Min also float64, which they select without rounding.
std::vector<TensorType> infer_arithmetic(const Graph& g, const Node& n) {
  std::vector<DType> allowed = kNumericDTypes;
  if (n.op == "Max" || n.op == "Min") allowed.push_back(DType::Float64);
  require_input_dtype(g, n, 0, allowed);
  require_same_dtypes(g, n);
  return {{input_type(g, n, 0).dtype, broadcast_inputs(g, n)}};
}

// Equal (also on bool), Less, Greater, LessOrEqual, GreaterOrEqual: a bool result.
std::vector<TensorType> infer_comparison(const Graph& g, const Node& n) {
  std::vector<DType> allowed = kNumericDTypes;
  if (n.op == "Equal") allowed.push_back(DType::Bool);
  require_input_dtype(g, n, 0, allowed);
  require_same_dtypes(g, n);
  return {{DType::Bool, broadcast_inputs(g, n)}};
}

// Not, And, Or: bool only.
std::vector<TensorType> infer_logical(const Graph& g, const Node& n) {
  for (size_t i = 0; i < n.inputs.size(); ++i) require_input_dtype(g, n, i, {DType::Bool});
  return {{DType::Bool, broadcast_inputs(g, n)}};
}

// The dtypes Where selects among and Cast converts from (float16 and bfloat16 are storage
// only; float64 is converted and selected, never computed on but by Max and Min).
const std::vector<DType> kComputedDTypes = {DType::Float32, DType::Float64, DType::Int32,
                                            DType::Int64,   DType::Int8,    DType::UInt8,
                                            DType::Bool};

// Where(condition, X, Y): X where the condition holds, else Y; all three broadcast.
std::vector<TensorType> infer_where(const Graph& g, const Node& n) {
  const DType c = input_type(g, n, 0).dtype;
  if (c != DType::Bool)
    fail_node(
        n, "does not support condition dtype " + std::string(dtype_name(c)) + " (supported: bool)");
  require_input_dtype(g, n, 1, kComputedDTypes);
  require_same_dtypes(g, n, 1);
  return {{input_type(g, n, 1).dtype, broadcast_inputs(g, n)}};
}

// ONNX TensorProto element types Cast converts to, by their number in `to`.
struct CastTarget {
  int64_t onnx_type;
  DType dtype;
};
const CastTarget kCastTargets[] = {
    {1, DType::Float32},  {2, DType::UInt8},    {3, DType::Int8},
    {6, DType::Int32},    {7, DType::Int64},    {9, DType::Bool},
    {10, DType::Float16}, {11, DType::Float64}, {16, DType::BFloat16}};

// Cast converts among every type tlmc stores: the 16-bit floats through float32.
std::vector<TensorType> infer_cast(const Graph& g, const Node& n) {
  std::vector<DType> from = kComputedDTypes;
  from.push_back(DType::Float16);
  from.push_back(DType::BFloat16);
  require_input_dtype(g, n, 0, from);
  const int64_t to = n.attr_int("to");
  for (const CastTarget& t : kCastTargets)
    if (t.onnx_type == to) return {{t.dtype, input_type(g, n, 0).shape}};
  std::string known;
  for (const CastTarget& t : kCastTargets)
    known += (known.empty() ? "" : ", ") + std::to_string(t.onnx_type) + " (" +
             std::string(dtype_name(t.dtype)) + ")";
  fail_node(n, "has to " + std::to_string(to) +
                   ", an ONNX element type tlmc does not convert to (supported: " + known + ")");
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

OpSchema unary(const std::string& name, int since_opset, std::vector<AttrSpec> attrs = {},
               InferFn infer = infer_unary) {
  return make_schema(name, {1, 1}, {1, 1}, OpClass::Elementwise, since_opset, std::move(attrs),
                     infer);
}

OpSchema binary(const std::string& name, int since_opset, InferFn infer) {
  return make_schema(name, {2, 2}, {1, 1}, OpClass::Elementwise, since_opset, {}, infer);
}

}  // namespace

std::vector<OpSchema> elementwise_op_schemas() {
  return {
      unary("Relu", 6),
      unary("LeakyRelu", 6, {float_attr("alpha", 0.01)}),
      make_schema("Clip", {1, 3}, {1, 1}, OpClass::Elementwise, 13, {}, infer_clip),
      unary("Sigmoid", 13),
      unary("HardSigmoid", 6, {float_attr("alpha", 0.2), float_attr("beta", 0.5)}),
      unary("HardSwish", 14),
      unary("Tanh", 13),
      unary("Erf", 13),
      unary("Exp", 13),
      unary("Log", 13),
      unary("Sqrt", 13),
      unary("Reciprocal", 13),
      unary("Floor", 13),
      unary("Neg", 13, {}, infer_numeric_unary),
      unary("Abs", 13, {}, infer_numeric_unary),
      unary("Not", 1, {}, infer_logical),
      unary("Cast", 13, {required_int("to")}, infer_cast),
      binary("Pow", 7, infer_binary),
      binary("Add", 7, infer_arithmetic),
      binary("Sub", 7, infer_arithmetic),
      binary("Mul", 7, infer_arithmetic),
      binary("Div", 7, infer_arithmetic),
      binary("Equal", 13, infer_comparison),
      binary("Less", 13, infer_comparison),
      binary("Greater", 13, infer_comparison),
      binary("LessOrEqual", 12, infer_comparison),
      binary("GreaterOrEqual", 12, infer_comparison),
      binary("And", 7, infer_logical),
      binary("Or", 7, infer_logical),
      make_schema("Max", {1, kAnyNumber}, {1, 1}, OpClass::Elementwise, 13, {}, infer_arithmetic),
      make_schema("Min", {1, kAnyNumber}, {1, 1}, OpClass::Elementwise, 13, {}, infer_arithmetic),
      make_schema("Where", {3, 3}, {1, 1}, OpClass::Elementwise, 9, {}, infer_where),
  };
}

}  // namespace tlmc::ir
