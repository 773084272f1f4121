// Shape inference of the data-movement operators (Reshape, Flatten, Transpose, Concat,
// Gather, Identity) and of the reductions ReduceMean and ReduceSum.
#include <algorithm>
#include <string>

#include "ir/op_schema_parts.h"
#include "ir/shape_rules.h"

namespace tlmc::ir {
namespace {

std::string dtype_str(DType t) { return std::string(dtype_name(t)); }

std::vector<TensorType> infer_identity(const Graph& g, const Node& n) {
  return {input_type(g, n, 0)};
}

// Reshape-14: the target shape is input 1, a constant int64 tensor; 0 copies the input's
// dimension (unless allowzero), one -1 is inferred from the element count.
std::vector<TensorType> infer_reshape(const Graph& g, const Node& n) {
  const TensorType& data = input_type(g, n, 0);
  const Tensor& shape = g.tensor(n.inputs.at(1));
  if (shape.type.dtype != DType::Int64)
    fail_node(
        n, "does not support shape dtype " + dtype_str(shape.type.dtype) + " (supported: int64)");
  if (shape.kind != TensorKind::Weight || !shape.data)
    fail_node(n, "needs its shape '" + shape.name + "' to be a constant weight");
  if (shape.type.shape.size() != 1)
    fail_node(n, "needs its shape '" + shape.name + "' to be 1-D, got shape " +
                     shape_str(shape.type.shape));
  const Shape target = weight_ints(shape);
  const bool allowzero = n.attr_int("allowzero") != 0;
  const bool has_zero = std::count(target.begin(), target.end(), 0) > 0;
  const bool has_minus_one = std::count(target.begin(), target.end(), -1) > 0;
  if (allowzero && has_zero && has_minus_one)
    fail_node(n, "has allowzero 1 and both 0 and -1 in its shape " + shape_str(target));
  Shape out = target;
  int inferred = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (inferred >= 0) fail_node(n, "has more than one -1 in its shape " + shape_str(target));
      inferred = static_cast<int>(i);
    } else if (target[i] == 0 && !allowzero) {
      if (i >= data.shape.size())
        fail_node(n, "cannot copy dimension " + std::to_string(i) + " (0 in shape " +
                         shape_str(target) + ") from input of shape " + shape_str(data.shape));
      out[i] = data.shape[i];
    } else if (target[i] < 0) {
      fail_node(n, "has invalid dimension " + std::to_string(target[i]) + " in its shape " +
                       shape_str(target));
    }
  }
  const int64_t numel = data.numel();
  if (inferred >= 0) {
    out[static_cast<size_t>(inferred)] = 1;
    const int64_t known = shape_numel(out);
    if (known == 0 || numel % known != 0)
      fail_node(n, "cannot reshape input of shape " + shape_str(data.shape) + " (" +
                       std::to_string(numel) + " elements) to " + shape_str(target));
    out[static_cast<size_t>(inferred)] = numel / known;
  }
  if (shape_numel(out) != numel)
    fail_node(n, "cannot reshape input of shape " + shape_str(data.shape) + " (" +
                     std::to_string(numel) + " elements) to " + shape_str(out) + " (" +
                     std::to_string(shape_numel(out)) + " elements)");
  return {{data.dtype, out}};
}

std::vector<TensorType> infer_flatten(const Graph& g, const Node& n) {
  const TensorType& x = input_type(g, n, 0);
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  const int64_t axis = n.attr_int("axis");
  if (axis < -rank || axis > rank)
    fail_node(n, "has axis " + std::to_string(axis) + " out of range for input of shape " +
                     shape_str(x.shape) + " (expected -" + std::to_string(rank) + " to " +
                     std::to_string(rank) + ")");
  const size_t split = static_cast<size_t>(axis < 0 ? axis + rank : axis);
  const Shape outer(x.shape.begin(), x.shape.begin() + static_cast<std::ptrdiff_t>(split));
  const Shape inner(x.shape.begin() + static_cast<std::ptrdiff_t>(split), x.shape.end());
  return {{x.dtype, {shape_numel(outer), shape_numel(inner)}}};
}

std::vector<TensorType> infer_transpose(const Graph& g, const Node& n) {
  const TensorType& x = input_type(g, n, 0);
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty())
    for (size_t i = x.shape.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = sorted.size() == x.shape.size();
  for (size_t i = 0; is_permutation && i < sorted.size(); ++i)
    is_permutation = sorted[i] == static_cast<int64_t>(i);
  if (!is_permutation)
    fail_node(n, "has perm " + shape_str(perm) + " that is not a permutation of the " +
                     std::to_string(x.shape.size()) + " axes of input of shape " +
                     shape_str(x.shape));
  Shape out;
  for (int64_t p : perm) out.push_back(x.shape[static_cast<size_t>(p)]);
  return {{x.dtype, out}};
}

std::vector<TensorType> infer_concat(const Graph& g, const Node& n) {
  const TensorType& first = input_type(g, n, 0);
  const int64_t axis_attr = n.attr_int("axis");
  std::optional<int> axis = normalize_axis(axis_attr, static_cast<int64_t>(first.shape.size()));
  if (!axis)
    fail_node(n, "has axis " + std::to_string(axis_attr) + " out of range for input 0 of shape " +
                     shape_str(first.shape));
  Shape out = first.shape;
  for (size_t i = 1; i < n.inputs.size(); ++i) {
    const TensorType& t = input_type(g, n, i);
    if (t.dtype != first.dtype)
      fail_node(n, "input " + std::to_string(i) + " has dtype " + dtype_str(t.dtype) +
                       " but input 0 has dtype " + dtype_str(first.dtype));
    bool fits = t.shape.size() == first.shape.size();
    for (size_t d = 0; fits && d < t.shape.size(); ++d)
      fits = static_cast<int>(d) == *axis || t.shape[d] == first.shape[d];
    if (!fits)
      fail_node(n, "input " + std::to_string(i) + " of shape " + shape_str(t.shape) +
                       " does not match input 0 of shape " + shape_str(first.shape) +
                       " outside axis " + std::to_string(*axis));
    out[static_cast<size_t>(*axis)] += t.shape[static_cast<size_t>(*axis)];
  }
  return {{first.dtype, out}};
}

std::vector<TensorType> infer_reduce(const Graph& g, const Node& n) {
  require_float32_input(g, n, 0);
  const TensorType& x = input_type(g, n, 0);
  const std::vector<int> axes = reduce_axes(g, n);
  if (axes.empty()) return {x};
  const bool keepdims = n.attr_int("keepdims") != 0;
  Shape out;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    const bool reduced = std::count(axes.begin(), axes.end(), static_cast<int>(d)) > 0;
    if (!reduced)
      out.push_back(x.shape[d]);
    else if (keepdims)
      out.push_back(1);
  }
  return {{DType::Float32, out}};
}

std::vector<TensorType> infer_gather(const Graph& g, const Node& n) {
  const TensorType& data = input_type(g, n, 0);
  const Tensor& indices = g.tensor(n.inputs.at(1));
  if (indices.type.dtype != DType::Int32 && indices.type.dtype != DType::Int64)
    fail_node(n, "does not support indices dtype " + dtype_str(indices.type.dtype) +
                     " (supported: int32, int64)");
  const int64_t axis_attr = n.attr_int("axis");
  std::optional<int> axis = normalize_axis(axis_attr, static_cast<int64_t>(data.shape.size()));
  if (!axis)
    fail_node(n, "has axis " + std::to_string(axis_attr) + " out of range for data of shape " +
                     shape_str(data.shape));
  const int64_t extent = data.shape[static_cast<size_t>(*axis)];
  if (indices.kind == TensorKind::Weight && indices.data)
    for (int64_t i : weight_ints(indices))
      if (i < -extent || i >= extent)
        fail_node(n, "has index " + std::to_string(i) + " out of range for axis " +
                         std::to_string(*axis) + " of data of shape " + shape_str(data.shape));
  Shape out(data.shape.begin(), data.shape.begin() + *axis);
  out.insert(out.end(), indices.type.shape.begin(), indices.type.shape.end());
  out.insert(out.end(), data.shape.begin() + *axis + 1, data.shape.end());
  return {{data.dtype, out}};
}

}  // namespace

std::vector<OpSchema> tensor_op_schemas() {
  return {
      make_schema("Reshape", {2, 2}, {1, 1}, OpClass::View, 5, {int_attr("allowzero", 0)},
                  infer_reshape),
      make_schema("Flatten", {1, 1}, {1, 1}, OpClass::View, 13, {int_attr("axis", 1)},
                  infer_flatten),
      make_schema("Identity", {1, 1}, {1, 1}, OpClass::View, 1, {}, infer_identity),
      make_schema("Transpose", {1, 1}, {1, 1}, OpClass::Injective, 13, {ints_attr("perm")},
                  infer_transpose),
      make_schema("Concat", {1, kAnyNumber}, {1, 1}, OpClass::Injective, 13, {required_int("axis")},
                  infer_concat),
      make_schema("Gather", {2, 2}, {1, 1}, OpClass::Injective, 13, {int_attr("axis", 0)},
                  infer_gather),
      // ReduceMean-13 takes its axes as an attribute (an input only from opset 18).
      make_schema("ReduceMean", {1, 1}, {1, 1}, OpClass::Anchor, 13,
                  {ints_attr("axes"), int_attr("keepdims", 1)}, infer_reduce),
      // ReduceSum-13 takes its axes as optional input 1.
      make_schema("ReduceSum", {1, 2}, {1, 1}, OpClass::Anchor, 13,
                  {int_attr("keepdims", 1), int_attr("noop_with_empty_axes", 0)}, infer_reduce),
  };
}

}  // namespace tlmc::ir
