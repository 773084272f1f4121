// The operator table is split by family over ir/op_schema_{nn,elementwise,tensor}.cc; this
// header joins the parts for ir/op_schema.cc and gives their shape inference its shared
// checks. Internal to ir/: nothing outside includes it.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "ir/op_schema.h"

namespace tlmc::ir {

struct Arity {
  int min;
  int max;
};
using InferFn = std::vector<TensorType> (*)(const Graph& g, const Node& n);

// One table entry: the operator's arity, class, opset, attributes (ONNX names and
// defaults) and shape inference. since_opset is the first opset whose definition of the
// operator means, for float32, what tlmc implements (the opset-17 semantics), so that older
// models that use it the same way are accepted: e.g. Relu 6, Add 7, Reshape 5 (allowzero
// 0), BatchNormalization 9 (inference).
inline OpSchema make_schema(std::string name, Arity inputs, Arity outputs, OpClass op_class,
                            int since_opset, std::vector<AttrSpec> attrs, InferFn infer) {
  OpSchema s;
  s.name = std::move(name);
  s.min_inputs = inputs.min;
  s.max_inputs = inputs.max;
  s.min_outputs = outputs.min;
  s.max_outputs = outputs.max;
  s.op_class = op_class;
  s.attrs = std::move(attrs);
  s.infer = infer;
  s.since_opset = since_opset;
  return s;
}
inline AttrSpec int_attr(std::string name, int64_t v) { return {std::move(name), v, false}; }
inline AttrSpec clamped_int_attr(std::string name, int64_t v) {
  return {std::move(name), v, false, true};
}
inline AttrSpec float_attr(std::string name, double v) { return {std::move(name), v, false}; }
inline AttrSpec string_attr(std::string name, std::string v) {
  return {std::move(name), std::move(v), false};
}
// A list attribute whose ONNX default depends on the input (e.g. strides: 1 per spatial
// axis); the empty list stands for that default.
inline AttrSpec ints_attr(std::string name) {
  return {std::move(name), std::vector<int64_t>{}, false};
}
inline AttrSpec required_int(std::string name) { return {std::move(name), int64_t{0}, true}; }
inline AttrSpec required_ints(std::string name) {
  return {std::move(name), std::vector<int64_t>{}, true};
}
// Concat's inputs have no upper bound.
constexpr int kAnyNumber = std::numeric_limits<int>::max();

std::vector<OpSchema> nn_op_schemas();           // ir/op_schema_nn.cc
std::vector<OpSchema> elementwise_op_schemas();  // ir/op_schema_elementwise.cc
std::vector<OpSchema> tensor_op_schemas();       // ir/op_schema_tensor.cc

// Throws a Diagnostic at the node: "<describe()> <message>".
[[noreturn]] void fail_node(const Node& n, const std::string& message);
// Type of input i; the input must be present.
const TensorType& input_type(const Graph& g, const Node& n, size_t i);
bool has_input(const Node& n, size_t i);
// Input i is float32, else "... does not support input dtype X (supported: float32)".
void require_float32_input(const Graph& g, const Node& n, size_t i);
// Every present input is float32, else "... does not support input dtype X (supported:
// float32)".
void require_float32_inputs(const Graph& g, const Node& n);
// A matrix product's or convolution's operands, and the type of its output: inputs 0 and 1
// both float32, or both of one 16-bit float type. With tlmc's attribute float32_output = 1
// (which tlmc's reduced precision writes, and the readers where a model's own product
// multiplies bfloat16: docs/driver.md), 16-bit operands are read as float32, the product
// accumulates and outputs float32, and any further input (bias) is float32. Without it, as
// ONNX has it, every input and the output are of the operands' type.
DType product_output_dtype(const Graph& g, const Node& n);
// Input i has one of the `allowed` dtypes, else "... does not support input dtype X
// (supported: float32, int64)".
void require_input_dtype(const Graph& g, const Node& n, size_t i,
                         const std::vector<DType>& allowed);
// Every present input from `first` on has the dtype of input `first`, else "... input 2 has
// dtype int64 but input 1 has dtype float32".
void require_same_dtypes(const Graph& g, const Node& n, size_t first = 0);
// The dtypes arithmetic (Add, Neg, Max, ...) and comparisons work on.
extern const std::vector<DType> kNumericDTypes;  // float32, int32, int64
// The node's output types: `first` for output 0. Any output beyond 0 that the node
// requests is an error (tlmc supports only the first output of MaxPool,
// BatchNormalization and LayerNormalization); absent ones (id -1) get `first` too.
std::vector<TensorType> only_first_output(const Graph& g, const Node& n, const TensorType& first);

}  // namespace tlmc::ir
