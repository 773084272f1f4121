// Shape inference of the neural-network operators: matrix products, convolutions, pools,
// normalisations and Softmax (ONNX opset-17 semantics).
#include <string>

#include "ir/op_schema_parts.h"
#include "ir/shape_rules.h"

namespace tlmc::ir {
namespace {

std::string dims_str(int64_t a, int64_t b) {
  return std::to_string(a) + " and " + std::to_string(b);
}

std::vector<TensorType> infer_matmul(const Graph& g, const Node& n) {
  const DType dtype = product_output_dtype(g, n);
  const Shape& a = input_type(g, n, 0).shape;
  const Shape& b = input_type(g, n, 1).shape;
  const std::string operands = shape_str(a) + " by " + shape_str(b);
  if (a.empty() || b.empty())
    fail_node(n, "cannot multiply " + operands + ": scalars are not allowed");
  // numpy matmul: a 1-D a is a row [1, K], a 1-D b a column [K, 1]; the 1 is dropped after.
  const Shape ma = a.size() == 1 ? Shape{1, a[0]} : a;
  const Shape mb = b.size() == 1 ? Shape{b[0], 1} : b;
  const int64_t ka = ma[ma.size() - 1], kb = mb[mb.size() - 2];
  if (ka != kb)
    fail_node(n,
              "cannot multiply " + operands + ": inner dimensions " + dims_str(ka, kb) + " differ");
  const Shape batch_a(ma.begin(), ma.end() - 2), batch_b(mb.begin(), mb.end() - 2);
  std::optional<Shape> batch = broadcast_shapes(batch_a, batch_b);
  if (!batch)
    fail_node(n, "cannot multiply " + operands + ": batch dimensions " + shape_str(batch_a) +
                     " and " + shape_str(batch_b) + " do not broadcast");
  Shape out = *batch;
  if (a.size() > 1) out.push_back(ma[ma.size() - 2]);
  if (b.size() > 1) out.push_back(mb[mb.size() - 1]);
  return {{dtype, out}};
}

std::vector<TensorType> infer_gemm(const Graph& g, const Node& n) {
  const DType dtype = product_output_dtype(g, n);
  const Shape& a = input_type(g, n, 0).shape;
  const Shape& b = input_type(g, n, 1).shape;
  if (a.size() != 2) fail_node(n, "input A must be 2-D, got " + shape_str(a));
  if (b.size() != 2) fail_node(n, "input B must be 2-D, got " + shape_str(b));
  const int64_t trans_a = n.attr_int("transA"), trans_b = n.attr_int("transB");
  const int64_t m = trans_a ? a[1] : a[0], ka = trans_a ? a[0] : a[1];
  const int64_t kb = trans_b ? b[1] : b[0], nn = trans_b ? b[0] : b[1];
  if (ka != kb)
    fail_node(n, "cannot multiply A " + shape_str(a) + " (transA " + std::to_string(trans_a) +
                     ") by B " + shape_str(b) + " (transB " + std::to_string(trans_b) +
                     "): inner dimensions " + dims_str(ka, kb) + " differ");
  const Shape out{m, nn};
  if (has_input(n, 2) && !broadcasts_to(input_type(g, n, 2).shape, out))
    fail_node(n, "input C of shape " + shape_str(input_type(g, n, 2).shape) +
                     " does not broadcast to the output shape " + shape_str(out));
  return {{dtype, out}};
}

void check_group(const Node& n, int64_t group) {
  if (group < 1) fail_node(n, "has group " + std::to_string(group) + "; it must be at least 1");
}

void check_bias(const Graph& g, const Node& n, int64_t channels) {
  if (!has_input(n, 2)) return;
  const Shape& bias = input_type(g, n, 2).shape;
  if (bias != Shape{channels})
    fail_node(n, "bias B of shape " + shape_str(bias) + " must have shape " +
                     shape_str({channels}) + " (one per output channel)");
}

// tlmc's attributes (not ONNX's) channels_last: 0, or 1 for [N, spatial..., C] tensors; and
// channel_block: 0, or B >= 2 for [N, C/B, spatial..., B] tensors, whose last dimension
// must then be B. Checked before the geometry, which reads them.
void check_channel_layout(const Graph& g, const Node& n) {
  const int64_t v = n.attr_int("channels_last"), block = n.attr_int("channel_block");
  if (v != 0 && v != 1)
    fail_node(n, "has channels_last " + std::to_string(v) + " (expected 0 or 1)");
  if (block == 0) return;
  if (block < 2 || block > 4096)
    fail_node(n, "has channel_block " + std::to_string(block) + " (expected 0, or 2 to 4096)");
  if (v != 0) fail_node(n, "has both channels_last and channel_block; it may have one of them");
  const Shape& x = input_type(g, n, 0).shape;
  if (x.empty() || x.back() != block)
    fail_node(n, "has channel_block " + std::to_string(block) + ", so input X must be [N, C/" +
                     std::to_string(block) + ", spatial..., " + std::to_string(block) + "], got " +
                     shape_str(x));
}

// [N, C, spatial...] in the node's layout.
Shape windowed_output(const Node& n, int64_t batch, int64_t channels, const SpatialGeometry& geo) {
  Shape out{batch, channels};
  out.insert(out.end(), geo.output.begin(), geo.output.end());
  return layout_shape(out, channel_layout(n));
}

// A blocked node's channel counts must be whole blocks.
void check_whole_blocks(const Node& n, int64_t channels, const char* what) {
  const int64_t block = channel_layout(n).block;
  if (block && channels % block != 0)
    fail_node(n, std::string("has ") + std::to_string(channels) + " " + what +
                     ", not a multiple of its channel_block " + std::to_string(block));
}

std::vector<TensorType> infer_conv(const Graph& g, const Node& n) {
  const DType dtype = product_output_dtype(g, n);
  const Shape& x = input_type(g, n, 0).shape;
  const Shape& w = input_type(g, n, 1).shape;
  check_channel_layout(g, n);
  const SpatialGeometry geo = spatial_geometry(g, n);
  const int64_t group = n.attr_int("group");
  check_group(n, group);
  const int64_t channels = channel_count(x, channel_layout(n));
  if (w[1] * group != channels)
    fail_node(n, "weight W of shape " + shape_str(w) + " does not fit input X of shape " +
                     shape_str(x) + " with group " + std::to_string(group) +
                     ": W.shape[1] * group must equal the " + std::to_string(channels) +
                     " input channels");
  if (w[0] % group != 0)
    fail_node(n, "weight W of shape " + shape_str(w) + " has " + std::to_string(w[0]) +
                     " output channels, not a multiple of group " + std::to_string(group));
  check_bias(g, n, w[0]);
  check_whole_blocks(n, w[0], "output channels");
  return {{dtype, windowed_output(n, x[0], w[0], geo)}};
}

std::vector<TensorType> infer_conv_transpose(const Graph& g, const Node& n) {
  require_float32_inputs(g, n);
  const Shape& x = input_type(g, n, 0).shape;
  const Shape& w = input_type(g, n, 1).shape;
  const SpatialGeometry geo = spatial_geometry(g, n);
  const int64_t group = n.attr_int("group");
  check_group(n, group);
  if (w[0] != x[1] || x[1] % group != 0)
    fail_node(n, "weight W of shape " + shape_str(w) + " does not fit input X of shape " +
                     shape_str(x) + " with group " + std::to_string(group) +
                     ": W.shape[0] must equal the " + std::to_string(x[1]) +
                     " input channels, a multiple of group");
  const int64_t channels = w[1] * group;
  check_bias(g, n, channels);
  Shape out{x[0], channels};
  out.insert(out.end(), geo.output.begin(), geo.output.end());
  return {{DType::Float32, out}};
}

std::vector<TensorType> infer_pool(const Graph& g, const Node& n) {
  require_float32_inputs(g, n);
  const Shape& x = input_type(g, n, 0).shape;
  check_channel_layout(g, n);
  const SpatialGeometry geo = spatial_geometry(g, n);
  if (!channel_layout(n).channels_first() && n.outputs.size() > 1 && n.outputs[1] >= 0)
    fail_node(n,
              "has a second output (Indices) and tlmc's channels_last or channel_block; "
              "Indices are computed in ONNX's layout only: drop the attribute or the output");
  if (n.op == "MaxPool" && n.attr_int("storage_order") != 0 && n.attr_int("storage_order") != 1)
    fail_node(n, "has storage_order " + std::to_string(n.attr_int("storage_order")) +
                     " (expected 0 or 1)");
  return only_first_output(
      g, n, {DType::Float32, windowed_output(n, x[0], channel_count(x, channel_layout(n)), geo)});
}

std::vector<TensorType> infer_global_average_pool(const Graph& g, const Node& n) {
  require_float32_inputs(g, n);
  const Shape& x = input_type(g, n, 0).shape;
  check_channel_layout(g, n);
  const ChannelLayout layout = channel_layout(n);
  if (x.size() < (layout.block ? 4u : 3u))
    fail_node(n, "input X must have rank " + std::string(layout.block ? "4" : "3") +
                     " or more (N, C" + (layout.block ? ", its block" : "") +
                     " and spatial axes), got " + shape_str(x));
  Shape out(x.size() - (layout.block ? 1 : 0), 1);
  out[0] = x[0];
  out[1] = channel_count(x, layout);
  return {{DType::Float32, layout_shape(out, layout)}};
}

std::vector<TensorType> infer_batch_normalization(const Graph& g, const Node& n) {
  require_float32_inputs(g, n);
  if (n.attr_int("training_mode") != 0)
    fail_node(n, "has training_mode " + std::to_string(n.attr_int("training_mode")) +
                     "; tlmc supports only inference (training_mode 0)");
  const TensorType& x = input_type(g, n, 0);
  if (x.shape.size() < 2)
    fail_node(n, "input X must have rank 2 or more (N, C, ...), got " + shape_str(x.shape));
  static const char* const kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    const Shape& s = input_type(g, n, i).shape;
    if (s != Shape{x.shape[1]})
      fail_node(n, "input " + std::string(kNames[i]) + " of shape " + shape_str(s) +
                       " must have shape " + shape_str({x.shape[1]}) +
                       " (one per channel of input X " + shape_str(x.shape) + ")");
  }
  return only_first_output(g, n, x);
}

std::vector<TensorType> infer_layer_normalization(const Graph& g, const Node& n) {
  require_float32_inputs(g, n);
  const TensorType& x = input_type(g, n, 0);
  const int64_t axis = n.attr_int("axis");
  if (!normalize_axis(axis, static_cast<int64_t>(x.shape.size())))
    fail_node(n, "has axis " + std::to_string(axis) + " out of range for input X of shape " +
                     shape_str(x.shape));
  static const char* const kNames[] = {"X", "Scale", "B"};
  for (size_t i = 1; i < 3; ++i) {
    if (!has_input(n, i)) continue;
    const Shape& s = input_type(g, n, i).shape;
    if (!broadcasts_to(s, x.shape))
      fail_node(n, "input " + std::string(kNames[i]) + " of shape " + shape_str(s) +
                       " does not broadcast to input X of shape " + shape_str(x.shape));
  }
  return only_first_output(g, n, x);
}

std::vector<TensorType> infer_softmax(const Graph& g, const Node& n) {
  require_float32_inputs(g, n);
  const TensorType& x = input_type(g, n, 0);
  const int64_t axis = n.attr_int("axis");
  if (!normalize_axis(axis, static_cast<int64_t>(x.shape.size())))
    fail_node(n, "has axis " + std::to_string(axis) + " out of range for input of shape " +
                     shape_str(x.shape));
  return {x};
}

// tlmc's own attribute of its products, beside ONNX's (see product_output_dtype).
std::vector<AttrSpec> with_float32_output(std::vector<AttrSpec> attrs) {
  attrs.push_back(int_attr("float32_output", 0));
  return attrs;
}

std::vector<AttrSpec> conv_attrs() {
  return {string_attr("auto_pad", "NOTSET"), ints_attr("dilations"), int_attr("group", 1),
          ints_attr("kernel_shape"),         ints_attr("pads"),      ints_attr("strides")};
}

// tlmc's own attributes of Conv and the pools, beside ONNX's (see check_channel_layout).
std::vector<AttrSpec> with_channel_layout(std::vector<AttrSpec> attrs) {
  attrs.push_back(int_attr("channels_last", 0));
  attrs.push_back(int_attr("channel_block", 0));
  return attrs;
}

}  // namespace

std::vector<OpSchema> nn_op_schemas() {
  std::vector<AttrSpec> conv_transpose_attrs = conv_attrs();
  conv_transpose_attrs.push_back(ints_attr("output_padding"));
  conv_transpose_attrs.push_back(ints_attr("output_shape"));
  return {
      make_schema("MatMul", {2, 2}, {1, 1}, OpClass::Anchor, 1, with_float32_output({}),
                  infer_matmul),
      make_schema("Gemm", {2, 3}, {1, 1}, OpClass::Anchor, 13,
                  with_float32_output({float_attr("alpha", 1.0), float_attr("beta", 1.0),
                                       int_attr("transA", 0), int_attr("transB", 0)}),
                  infer_gemm),
      make_schema("Conv", {2, 3}, {1, 1}, OpClass::Anchor, 11,
                  with_float32_output(with_channel_layout(conv_attrs())), infer_conv),
      make_schema("ConvTranspose", {2, 3}, {1, 1}, OpClass::Anchor, 11, conv_transpose_attrs,
                  infer_conv_transpose),
      make_schema("MaxPool", {1, 1}, {1, 2}, OpClass::Anchor, 12,
                  with_channel_layout({string_attr("auto_pad", "NOTSET"), int_attr("ceil_mode", 0),
                                       ints_attr("dilations"), required_ints("kernel_shape"),
                                       ints_attr("pads"), int_attr("storage_order", 0),
                                       ints_attr("strides")}),
                  infer_pool),
      make_schema(
          "AveragePool", {1, 1}, {1, 1}, OpClass::Anchor, 11,
          with_channel_layout({string_attr("auto_pad", "NOTSET"), int_attr("ceil_mode", 0),
                               int_attr("count_include_pad", 0), required_ints("kernel_shape"),
                               ints_attr("pads"), ints_attr("strides")}),
          infer_pool),
      make_schema("GlobalAveragePool", {1, 1}, {1, 1}, OpClass::Anchor, 1, with_channel_layout({}),
                  infer_global_average_pool),
      make_schema(
          "BatchNormalization", {5, 5}, {1, 5}, OpClass::Elementwise, 9,
          {float_attr("epsilon", 1e-5), float_attr("momentum", 0.9), int_attr("training_mode", 0)},
          infer_batch_normalization),
      make_schema("LayerNormalization", {2, 3}, {1, 3}, OpClass::Anchor, 17,
                  {int_attr("axis", -1), float_attr("epsilon", 1e-5), int_attr("stash_type", 1)},
                  infer_layer_normalization),
      make_schema("Softmax", {1, 1}, {1, 1}, OpClass::Anchor, 13, {int_attr("axis", -1)},
                  infer_softmax),
  };
}

}  // namespace tlmc::ir
