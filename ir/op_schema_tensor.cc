// Shape inference of the data-movement operators (Reshape, Flatten, Squeeze, Unsqueeze,
// Transpose, Concat, Gather, Expand, Slice, Split, Pad, Tile, Identity), of the operators
// that make tensors from shapes (Shape, ConstantOfShape, Range) and of the reductions
// ReduceMean and ReduceSum.
#include <algorithm>
#include <limits>
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
  const Shape target = constant_ints(g, n, 1, "shape");
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
  if (inferred >= 0) out[static_cast<size_t>(inferred)] = 1;
  const std::string beyond = shape_beyond_limits(out);  // before any product of its axes
  if (!beyond.empty())
    fail_node(n, "has the shape " + shape_str(target) + ", beyond tlmc's limits: " + beyond);
  if (inferred >= 0) {
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

// Unsqueeze-13: axes (input 1) name positions in the output, which has one more axis each.
std::vector<TensorType> infer_unsqueeze(const Graph& g, const Node& n) {
  const TensorType& x = input_type(g, n, 0);
  const std::vector<int64_t> axes = constant_ints(g, n, 1, "axes");
  const int64_t rank = static_cast<int64_t>(x.shape.size() + axes.size());
  std::vector<bool> inserted(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    std::optional<int> axis = normalize_axis(a, rank);
    if (!axis)
      fail_node(n, "has axis " + std::to_string(a) + " out of range for an output of rank " +
                       std::to_string(rank) + " (input of shape " + shape_str(x.shape) + ")");
    if (inserted[static_cast<size_t>(*axis)])
      fail_node(n,
                "has axes " + shape_str(axes) + " naming axis " + std::to_string(*axis) + " twice");
    inserted[static_cast<size_t>(*axis)] = true;
  }
  Shape out;
  size_t next = 0;
  for (bool one : inserted) out.push_back(one ? 1 : x.shape[next++]);
  return {{x.dtype, out}};
}

// Squeeze-13: removes the axes of input 1, each of extent 1, or (input 1 absent or empty,
// as ONNX Runtime reads it) every axis of extent 1.
std::vector<TensorType> infer_squeeze(const Graph& g, const Node& n) {
  const TensorType& x = input_type(g, n, 0);
  std::vector<bool> removed(x.shape.size(), false);
  const std::vector<int64_t> axes =
      has_input(n, 1) ? constant_ints(g, n, 1, "axes") : std::vector<int64_t>{};
  if (!axes.empty()) {
    for (int64_t a : axes) {
      std::optional<int> axis = normalize_axis(a, static_cast<int64_t>(x.shape.size()));
      if (!axis)
        fail_node(n, "has axis " + std::to_string(a) + " out of range for input of shape " +
                         shape_str(x.shape));
      const size_t d = static_cast<size_t>(*axis);
      if (removed[d])
        fail_node(n,
                  "has axes " + shape_str(axes) + " naming axis " + std::to_string(d) + " twice");
      if (x.shape[d] != 1)
        fail_node(n, "cannot squeeze axis " + std::to_string(d) + " of extent " +
                         std::to_string(x.shape[d]) + " (input of shape " + shape_str(x.shape) +
                         ")");
      removed[d] = true;
    }
  } else {
    for (size_t d = 0; d < x.shape.size(); ++d) removed[d] = x.shape[d] == 1;
  }
  Shape out;
  for (size_t d = 0; d < x.shape.size(); ++d)
    if (!removed[d]) out.push_back(x.shape[d]);
  return {{x.dtype, out}};
}

// Shape-15: dimensions start to end of the input's shape, as a 1-D int64 tensor.
std::vector<TensorType> infer_shape(const Graph& g, const Node& n) {
  const DimRange r = shape_range(n, static_cast<int64_t>(input_type(g, n, 0).shape.size()));
  return {{DType::Int64, {r.end - r.begin}}};
}

// Dimensions given as data (ConstantOfShape, Expand): each at least 0.
void require_dimensions(const Node& n, const Shape& dims) {
  for (int64_t d : dims)
    if (d < 0)
      fail_node(n,
                "has invalid dimension " + std::to_string(d) + " in its shape " + shape_str(dims));
}

// ConstantOfShape-9: ONNX's TENSOR attribute `value` is tlmc's `value` (a number) and
// `dtype` (a dtype name).
std::vector<TensorType> infer_constant_of_shape(const Graph& g, const Node& n) {
  const Shape dims = constant_ints(g, n, 0, "shape");
  require_dimensions(n, dims);
  const std::string& name = n.attr_string("dtype");
  const std::optional<DType> t = parse_dtype(name);
  if (!t || *t == DType::Float16 || *t == DType::BFloat16 || *t == DType::Float64)
    fail_node(n, "has dtype '" + name + "' (supported: float32, int32, int64, int8, uint8, bool)");
  return {{*t, dims}};
}

// Range-11: scalars start, limit, delta of one dtype.
std::vector<TensorType> infer_range(const Graph& g, const Node& n) {
  require_input_dtype(g, n, 0, kNumericDTypes);
  require_same_dtypes(g, n);
  return {{input_type(g, n, 0).dtype, {range_count(g, n)}}};
}

// Expand-13: the input broadcast with the shape (input 1), both ways (numpy rules).
std::vector<TensorType> infer_expand(const Graph& g, const Node& n) {
  const TensorType& x = input_type(g, n, 0);
  const Shape dims = constant_ints(g, n, 1, "shape");
  require_dimensions(n, dims);
  std::optional<Shape> out = broadcast_shapes(x.shape, dims);
  if (!out)
    fail_node(n, "cannot broadcast input of shape " + shape_str(x.shape) + " with shape " +
                     shape_str(dims));
  return {{x.dtype, *out}};
}

std::vector<TensorType> infer_slice(const Graph& g, const Node& n) {
  return {{input_type(g, n, 0).dtype, slice_geometry(g, n).output}};
}

std::vector<TensorType> infer_split(const Graph& g, const Node& n) {
  const TensorType& x = input_type(g, n, 0);
  const SplitGeometry s = split_geometry(g, n);
  std::vector<TensorType> out;
  for (int64_t size : s.sizes) {
    out.push_back(x);
    out.back().shape[static_cast<size_t>(s.axis)] = size;
  }
  return out;
}

std::vector<TensorType> infer_pad(const Graph& g, const Node& n) {
  const TensorType& x = input_type(g, n, 0);
  const PadGeometry p = pad_geometry(g, n);
  if (has_input(n, 2) && input_type(g, n, 2).dtype != x.dtype)
    fail_node(n, "has constant_value of dtype " + dtype_str(input_type(g, n, 2).dtype) +
                     " for data of dtype " + dtype_str(x.dtype));
  return {{x.dtype, p.output}};
}

// Tile-13: each dimension repeated `repeats` (input 1) times.
std::vector<TensorType> infer_tile(const Graph& g, const Node& n) {
  const TensorType& x = input_type(g, n, 0);
  const std::vector<int64_t> repeats = constant_ints(g, n, 1, "repeats");
  if (repeats.size() != x.shape.size())
    fail_node(n, "has repeats " + shape_str(repeats) + " of length " +
                     std::to_string(repeats.size()) + ", expected " +
                     std::to_string(x.shape.size()) + " (one per axis of input " +
                     shape_str(x.shape) + ")");
  Shape out = x.shape;
  for (size_t d = 0; d < out.size(); ++d) {
    if (repeats[d] < 0)
      fail_node(n, "has repeats " + shape_str(repeats) + " with a negative count");
    out[d] *= repeats[d];
  }
  return {{x.dtype, out}};
}

}  // namespace

std::vector<OpSchema> tensor_op_schemas() {
  return {
      make_schema("Reshape", {2, 2}, {1, 1}, OpClass::View, 5, {int_attr("allowzero", 0)},
                  infer_reshape),
      make_schema("Flatten", {1, 1}, {1, 1}, OpClass::View, 13, {int_attr("axis", 1)},
                  infer_flatten),
      make_schema("Identity", {1, 1}, {1, 1}, OpClass::View, 1, {}, infer_identity),
      make_schema("Unsqueeze", {2, 2}, {1, 1}, OpClass::View, 13, {}, infer_unsqueeze),
      make_schema("Squeeze", {1, 2}, {1, 1}, OpClass::View, 13, {}, infer_squeeze),
      // The end attribute's ONNX default is "the rank": any value past it means the same.
      make_schema("Shape", {1, 1}, {1, 1}, OpClass::Injective, 13,
                  {clamped_int_attr("start", 0),
                   clamped_int_attr("end", std::numeric_limits<int64_t>::max())},
                  infer_shape),
      make_schema("ConstantOfShape", {1, 1}, {1, 1}, OpClass::Injective, 9,
                  {float_attr("value", 0.0), string_attr("dtype", "float32")},
                  infer_constant_of_shape),
      make_schema("Range", {3, 3}, {1, 1}, OpClass::Injective, 11, {}, infer_range),
      make_schema("Expand", {2, 2}, {1, 1}, OpClass::Injective, 13, {}, infer_expand),
      make_schema("Slice", {3, 5}, {1, 1}, OpClass::Injective, 13, {}, infer_slice),
      make_schema("Split", {1, 2}, {1, kAnyNumber}, OpClass::Injective, 13, {int_attr("axis", 0)},
                  infer_split),
      make_schema("Pad", {2, 3}, {1, 1}, OpClass::Injective, 13, {string_attr("mode", "constant")},
                  infer_pad),
      make_schema("Tile", {2, 2}, {1, 1}, OpClass::Injective, 13, {}, infer_tile),
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
