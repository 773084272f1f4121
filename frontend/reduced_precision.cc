#include "frontend/reduced_precision.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "ir/diagnostic.h"
#include "ir/graph_verify.h"
#include "ir/shape_rules.h"
#include "reference/kernels.h"

namespace tlmc::frontend {
namespace {

// A convolution the bf16 unit computes as a matrix product per tap of its window
// (scheduler/tile_product.h): of one group, channels-last positions as A's rows, its weight
// a [M, C] matrix per tap. 1 x 1 convolutions of stride 1 and no padding are one such
// product whatever C; any other (a window, a stride, padding) sums over its taps, each over
// the C input channels, and takes 16 channels or more: a step of the unit spans 32, and a
// window over the 3 channels of an image's stem would leave most of each step empty (such a
// window's columns become channels first where that makes 16: fold_window_columns).
bool is_unit_conv(const ir::Graph& g, const ir::Node& n) {
  if (n.op != "Conv" || n.inputs.size() < 2 || n.attr_int("group") != 1) return false;
  const auto all = [](const std::vector<int64_t>& v, int64_t x) {
    return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
  };
  const ir::Shape& w = g.type(n.inputs[1]).shape;  // [M, C, k...]
  const bool pointwise = all(std::vector<int64_t>(w.begin() + 2, w.end()), 1) &&
                         all(n.attr_ints("strides"), 1) && all(n.attr_ints("pads"), 0);
  return pointwise || (w.size() >= 2 && w[1] >= 16);
}

// A depthwise convolution (one input channel per group) is no product the unit computes,
// but its input is the widest tensor of an inverted residual block (MobileNet's expanded
// channels): rounded, the 1 x 1 convolution before it writes it in bfloat16, half the bytes,
// and the depthwise one reads it widened once into its padded copy (ir/lower_ops_nn.cc),
// computing in float32 from there. OpenVINO's default rounds these convolutions so too. On
// a 2-core Intel Xeon with AMX, MobileNetV2 at -O0 --precision bf16 went from 1888 to 1690
// us (the sum of its kernels' medians, --profile).
bool is_depthwise(const ir::Graph& g, const ir::Node& n) {
  if (n.op != "Conv" || n.inputs.size() < 2) return false;
  const ir::Shape& w = g.type(n.inputs[1]).shape;  // [M, C / group, k...]
  return w.size() >= 3 && w[1] == 1 && n.attr_int("group") == w[0] && w[0] > 1;
}

// A weight of int64 values, for the attributes-as-inputs of Pad and Slice.
int int64_weight(ir::Graph& out, const std::string& base, const std::vector<int64_t>& values,
                 const SourceLoc& loc) {
  ir::Tensor t;
  t.name = ir::unused_tensor_name(out, base);
  t.type = {ir::DType::Int64, {static_cast<int64_t>(values.size())}};
  t.kind = ir::TensorKind::Weight;
  t.loc = loc;
  auto bytes = std::make_shared<std::vector<uint8_t>>(8 * values.size());
  if (!values.empty()) std::memcpy(bytes->data(), values.data(), bytes->size());
  t.data = bytes;
  out.tensors.push_back(t);
  return static_cast<int>(out.tensors.size()) - 1;
}

int intermediate(ir::Graph& out, const std::string& base, const ir::TensorType& type,
                 const SourceLoc& loc) {
  ir::Tensor t;
  t.name = ir::unused_tensor_name(out, base);
  t.type = type;
  t.loc = loc;
  out.tensors.push_back(t);
  return static_cast<int>(out.tensors.size()) - 1;
}

// The most columns a window folded into channels may have (fold_window_columns): the copy
// that folds it, a Pad, a Slice per column and their Concat, is one kernel where the
// partitioner's groups take them all (scheduler/partition.cc grows a group at most 8 nodes
// past a point where one tensor alone leaves it: the Slices and then the Concat); with more
// columns each Slice would be a kernel of its own.
constexpr int64_t kMaxFoldedColumns = 7;

// Does the bf16 pass fold the columns of conv n's window into channels
// (fold_window_columns)? A 2-D convolution of one group over C < 16 input channels (an
// image's stem: 3), float32 with a weight, whose window has 2 to kMaxFoldedColumns columns
// with KW * C >= 16.
bool folds_window_columns(const ir::Graph& g, const ir::Node& n) {
  if (n.op != "Conv" || n.inputs.size() < 2 || n.attr_int("group") != 1 ||
      n.attr_int("channels_last") != 0 || n.attr_int("channel_block") != 0)
    return false;
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  const ir::TensorType& x = g.type(n.inputs[0]);
  if (w.kind != ir::TensorKind::Weight || w.type.dtype != ir::DType::Float32 ||
      x.dtype != ir::DType::Float32 || x.shape.size() != 4 || w.type.shape.size() != 4)
    return false;
  const int64_t c = w.type.shape[1], kw = w.type.shape[3];
  return c < 16 && kw >= 2 && kw <= kMaxFoldedColumns && kw * c >= 16;
}

// Conv n's window columns folded into channels (folds_window_columns), so that the unit
// computes it (is_unit_conv) with steps that hold KW * C values, not C. x is padded (a Pad,
// always, of zero width where the convolution has no padding: it starts the copy's kernel),
// read at each column kw of the window by a Slice with the convolution's stride, and the KW
// slices concatenated along the channels:
//   xc[n, kw * C + c, h, ow] = xpad[n, c, h, ow * sw + kw * dw];
// the convolution then reads xc with a window of [KH, 1], strides [sh, 1], dilations
// [dh, 1] and no padding (xpad holds it, along the height too), its weight
// w'[m, kw * C + c, kh, 0] = w[m, c, kh, kw]. The same sums in another order, exactly.
// ResNet-50's 7 x 7 stem (3 channels, stride 2) becomes a [7, 1] window over 21 channels: on
// a 2-core Intel Xeon with AMX its kernels at -O0 took 829 us in float32, and 314 us plus 131
// us for the copy folded (the sums of --profile medians in one session). Alone, NCHW in and
// out, at -O0: a 7 x 7 stem over 224 x 224 pixels 721 us folded against 1043 in float32; a 5
// x 5 window over 4 channels (64 x 64, 48 outputs) 151 against 255; over 15 channels (3 x 3,
// 56 x 56, 64 outputs) 202 against 226; over 8 channels (3 x 3, 56 x 56, 32 outputs) 80
// against 82, where the copy costs what the unit saves. Where KW * C < 16 (MobileNet's 3 x 3
// stem: 9) the convolution stays float32. Returns the nodes that replace n, the new
// convolution last (n's name and outputs), or none where n is not folded.
std::vector<ir::Node> fold_window_columns(ir::Graph& out, const ir::Graph& g, const ir::Node& n) {
  if (!folds_window_columns(g, n)) return {};
  const ir::Tensor& w = g.tensor(n.inputs[1]);
  const ir::TensorType& x = g.type(n.inputs[0]);
  const int64_t m = w.type.shape[0], c = w.type.shape[1], kh = w.type.shape[2],
                kw = w.type.shape[3];
  const ir::SpatialGeometry geo = ir::spatial_geometry(g, n);
  const int64_t ow = geo.output[1], sw = geo.strides[1], dw = geo.dilations[1];
  std::vector<ir::Node> nodes;
  const std::string& base = g.tensor(n.inputs[0]).name;
  ir::Node pad;
  pad.op = "Pad";
  pad.name = n.name + ".column_pad";
  pad.loc = n.loc;
  const int pads = int64_weight(
      out, base + ".column_pads",
      {0, 0, geo.pads_begin[0], geo.pads_begin[1], 0, 0, geo.pads_end[0], geo.pads_end[1]}, n.loc);
  ir::Shape shape = x.shape;
  shape[2] += geo.pads_begin[0] + geo.pads_end[0];
  shape[3] += geo.pads_begin[1] + geo.pads_end[1];
  const int padded = intermediate(out, base + ".padded_columns", {x.dtype, shape}, n.loc);
  pad.inputs = {n.inputs[0], pads};
  pad.outputs = {padded};
  nodes.push_back(pad);
  ir::Node concat;
  concat.op = "Concat";
  concat.name = n.name + ".columns";
  concat.loc = n.loc;
  concat.attrs["axis"] = ir::Attr{int64_t{1}, n.loc};
  const int64_t h = x.shape[2] + geo.pads_begin[0] + geo.pads_end[0];
  const ir::TensorType column{x.dtype, {x.shape[0], c, h, ow}};
  const int axes = int64_weight(out, base + ".column_axes", {3}, n.loc);
  const int steps = int64_weight(out, base + ".column_steps", {sw}, n.loc);
  for (int64_t k = 0; k < kw; ++k) {
    ir::Node slice;
    slice.op = "Slice";
    slice.name = n.name + ".column" + std::to_string(k);
    slice.loc = n.loc;
    const std::string at = base + ".column" + std::to_string(k);
    slice.inputs = {padded, int64_weight(out, at + ".starts", {k * dw}, n.loc),
                    int64_weight(out, at + ".ends", {k * dw + sw * (ow - 1) + 1}, n.loc), axes,
                    steps};
    slice.outputs = {intermediate(out, at, column, n.loc)};
    concat.inputs.push_back(slice.outputs[0]);
    nodes.push_back(slice);
  }
  concat.outputs = {
      intermediate(out, base + ".columns", {x.dtype, {x.shape[0], kw * c, h, ow}}, n.loc)};
  nodes.push_back(concat);

  ir::Tensor folded;
  folded.name = ir::unused_tensor_name(out, w.name + ".columns");
  folded.type = {ir::DType::Float32, {m, kw * c, kh, 1}};
  folded.kind = ir::TensorKind::Weight;
  folded.loc = w.loc;
  const std::vector<double> values = ir::weight_values(w);
  auto bytes = std::make_shared<std::vector<uint8_t>>(4 * values.size());
  for (int64_t o = 0; o < m; ++o)
    for (int64_t i = 0; i < c; ++i)
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t k = 0; k < kw; ++k) {
          const auto v =
              static_cast<float>(values[static_cast<size_t>(((o * c + i) * kh + r) * kw + k)]);
          const int64_t to = (o * kw * c + k * c + i) * kh + r;
          std::memcpy(bytes->data() + 4 * to, &v, 4);
        }
  folded.data = bytes;
  out.tensors.push_back(folded);

  ir::Node conv = n;
  conv.inputs[0] = concat.outputs[0];
  conv.inputs[1] = static_cast<int>(out.tensors.size()) - 1;
  const auto ints = [&](std::vector<int64_t> v) { return ir::Attr{std::move(v), n.loc}; };
  conv.attrs["auto_pad"] = ir::Attr{std::string("NOTSET"), n.loc};
  conv.attrs["kernel_shape"] = ints({kh, 1});
  conv.attrs["strides"] = ints({geo.strides[0], 1});
  conv.attrs["dilations"] = ints({geo.dilations[0], 1});
  conv.attrs["pads"] = ints({0, 0, 0, 0});
  nodes.push_back(conv);
  return nodes;
}

// The products whose first two inputs are the operands rounded to bfloat16: matrix products,
// and the convolutions the unit computes (is_unit_conv), where the second operand (B, read
// along the columns of the output and the reduction) is a weight. The unit reads B packed in
// rows of bfloat16 pairs, which a weight is once at compile time; an activation as B (the
// products of attention: scores, and their product with the values) would have to be
// packed as the kernel runs, which tlmc does not do, and computed by loops widening bfloat16
// such products ran at 0.54-0.69x their float32 speed (bench_kernels_bf16's W5, U7 and U9 on
// a 2-core Intel Xeon with AMX): they stay float32.
bool is_demotable(const ir::Graph& g, const ir::Node& n, PrecisionOptions::Ops ops) {
  if (n.inputs.size() < 2 || n.inputs[1] < 0 ||
      g.tensor(n.inputs[1]).kind != ir::TensorKind::Weight)
    return false;
  if (n.op == "MatMul" || n.op == "Gemm") return ops != PrecisionOptions::Ops::Conv;
  return (is_unit_conv(g, n) || is_depthwise(g, n)) && ops != PrecisionOptions::Ops::MatMul;
}

bool is_product(const ir::Node& n) {
  return n.op == "MatMul" || n.op == "Gemm" || n.op == "Conv" || n.op == "ConvTranspose";
}

// --bf16-storage shared: an activation rounded for the products that read it (t, its copy
// `rounded[t]`) which other nodes read too, in float32, is read by each of them widened from
// the copy (a Cast to float32 of its own, which its kernel computes in its loads:
// scheduler/partition.cc), so that t's producer stores the copy alone. Not where t is a graph
// input or output (in float32 however it is read), nor where a product that stays float32
// reads it (it reads float32: --keep-fp32, or a product of two activations).
void share_rounded_activations(ir::Graph& out, const std::map<int, int>& rounded) {
  const std::vector<std::vector<int>> consumers = out.consumers();
  const std::vector<int> producers = out.producers();
  std::map<int, int> shared;  // t -> its copy
  for (const auto& [t, copy] : rounded) {
    if (out.tensor(t).kind == ir::TensorKind::Weight || out.is_output(t) ||
        producers[static_cast<size_t>(t)] < 0)
      continue;
    bool float32_product = false;
    for (int r : consumers[static_cast<size_t>(t)])
      float32_product = float32_product || is_product(out.nodes[static_cast<size_t>(r)]);
    if (!float32_product) shared[t] = copy;
  }
  // The Cast rounding each shared t: moved to follow t's producer, so that every reader of
  // the copy comes after it.
  auto rounds_shared = [&](const ir::Node& n) {
    if (n.op != "Cast" || n.inputs.size() != 1) return false;
    const auto it = shared.find(n.inputs[0]);
    return it != shared.end() && n.outputs == std::vector<int>{it->second};
  };
  std::map<int, ir::Node> cast_of;  // t -> the Cast computing its copy
  for (const ir::Node& n : out.nodes)
    if (rounds_shared(n)) cast_of[n.inputs[0]] = n;
  std::vector<ir::Node> nodes;
  for (const ir::Node& n : out.nodes) {
    if (rounds_shared(n)) continue;
    ir::Node reader = n;
    for (int& in : reader.inputs) {
      if (in < 0 || !shared.count(in)) continue;
      ir::Tensor widened = out.tensor(in);
      widened.name = ir::unused_tensor_name(out, widened.name + ".widened");
      const int id = static_cast<int>(out.tensors.size());
      nodes.push_back(
          ir::float_cast_node(widened.name, shared.at(in), id, ir::DType::Float32, n.loc));
      out.tensors.push_back(widened);
      in = id;
    }
    nodes.push_back(reader);
    for (int t : n.outputs)
      if (t >= 0 && shared.count(t)) nodes.push_back(cast_of.at(t));
  }
  out.nodes = std::move(nodes);
}

// The products' operands rounded (demote_products_to_bf16, past its checks and folds).
ir::Graph demote(const ir::Graph& g, const PrecisionOptions& options,
                 const std::set<std::string>& keep) {
  ir::Graph out = g;
  out.nodes.clear();
  std::map<int, int> rounded;  // float32 tensor -> its bfloat16 copy
  for (const ir::Node& n : g.nodes) {
    if (!is_demotable(g, n, options.ops) || keep.count(n.name) ||
        g.type(n.inputs[0]).dtype != ir::DType::Float32 ||
        g.type(n.inputs[1]).dtype != ir::DType::Float32) {
      out.nodes.push_back(n);
      continue;
    }
    ir::Node product = n;
    product.attrs["float32_output"] = ir::Attr{int64_t{1}, n.loc};
    for (size_t i = 0; i < 2; ++i) {
      const int t = n.inputs[i];
      auto known = rounded.find(t);
      if (known == rounded.end()) {
        const ir::Tensor& from = g.tensor(t);
        ir::Tensor copy;
        copy.name = ir::unused_tensor_name(out, from.name + ".bf16");
        copy.type = {ir::DType::BFloat16, from.type.shape};
        copy.loc = from.loc;
        copy.kind = from.kind == ir::TensorKind::Weight ? ir::TensorKind::Weight
                                                        : ir::TensorKind::Intermediate;
        if (from.kind == ir::TensorKind::Weight) {  // converted now, once
          const std::vector<double> values = ir::weight_values(from);
          auto bytes = std::make_shared<std::vector<uint8_t>>(2 * values.size());
          for (size_t e = 0; e < values.size(); ++e)
            reference::store_element(ir::DType::BFloat16, values[e], bytes->data() + 2 * e);
          copy.data = bytes;
        }
        const int id = static_cast<int>(out.tensors.size());
        out.tensors.push_back(copy);
        if (from.kind != ir::TensorKind::Weight)
          out.nodes.push_back(ir::float_cast_node(copy.name, t, id, ir::DType::BFloat16, n.loc));
        known = rounded.emplace(t, id).first;
      }
      product.inputs[i] = known->second;
    }
    out.nodes.push_back(product);
  }
  if (options.storage == PrecisionOptions::Storage::Shared) share_rounded_activations(out, rounded);
  // Weights no node reads any more (every reader takes the bfloat16 copy) leave the graph.
  std::vector<bool> read(out.tensors.size(), false);
  for (const ir::Node& n : out.nodes)
    for (int t : n.inputs)
      if (t >= 0) read[static_cast<size_t>(t)] = true;
  for (int t : out.outputs) read[static_cast<size_t>(t)] = true;
  std::vector<int> renumber(out.tensors.size(), -1);
  std::vector<ir::Tensor> kept;
  for (size_t t = 0; t < out.tensors.size(); ++t) {
    if (out.tensors[t].kind == ir::TensorKind::Weight && !read[t]) continue;
    renumber[t] = static_cast<int>(kept.size());
    kept.push_back(std::move(out.tensors[t]));
  }
  out.tensors = std::move(kept);
  auto remap = [&](std::vector<int>& ids) {
    for (int& id : ids)
      if (id >= 0) id = renumber[static_cast<size_t>(id)];
  };
  for (ir::Node& n : out.nodes) {
    remap(n.inputs);
    remap(n.outputs);
  }
  remap(out.inputs);
  remap(out.outputs);
  return ir::verify_graph(std::move(out));
}

}  // namespace

ir::Graph demote_products_to_bf16(const ir::Graph& g, const PrecisionOptions& options) {
  std::set<std::string> keep(options.keep_fp32.begin(), options.keep_fp32.end());
  for (const std::string& name : keep) {
    const bool found = std::any_of(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) {
      return n.name == name && is_product(n);
    });
    if (!found)
      throw Diagnostic({}, "--keep-fp32 names '" + name +
                               "', which is not a matrix product or convolution of the model "
                               "(--dump graph lists the nodes)");
  }
  ir::Graph folded = g;
  if (options.ops != PrecisionOptions::Ops::MatMul) {
    folded.nodes.clear();
    for (const ir::Node& n : g.nodes) {
      std::vector<ir::Node> nodes;
      if (!keep.count(n.name)) nodes = fold_window_columns(folded, g, n);
      if (nodes.empty()) nodes = {n};
      folded.nodes.insert(folded.nodes.end(), nodes.begin(), nodes.end());
    }
    folded = ir::verify_graph(std::move(folded));
  }
  return demote(folded, options, keep);
}

std::string float32_reason(const ir::Graph& g, const ir::Node& n, const PrecisionOptions& options) {
  if (!is_product(n) || n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0) return "";
  if (is_depthwise(g, n) && g.type(n.inputs[0]).dtype == ir::DType::BFloat16)
    return "a depthwise convolution, no product for the unit: it reads bfloat16 and widens it "
           "once, into its padded copy";
  if (g.type(n.inputs[0]).dtype != ir::DType::Float32 ||
      g.type(n.inputs[1]).dtype != ir::DType::Float32)
    return "";
  if (std::find(options.keep_fp32.begin(), options.keep_fp32.end(), n.name) !=
      options.keep_fp32.end())
    return "kept by --keep-fp32";
  if (n.op == "ConvTranspose") return "a ConvTranspose (bf16 takes MatMul, Gemm and Conv)";
  if (g.tensor(n.inputs[1]).kind != ir::TensorKind::Weight)
    return "its second operand is an activation, which the unit would have to read packed as "
           "the kernel runs";
  const bool conv = n.op == "Conv";
  if (conv && options.ops == PrecisionOptions::Ops::MatMul) return "--precision-ops matmul";
  if (!conv && options.ops == PrecisionOptions::Ops::Conv) return "--precision-ops conv";
  if (!conv) return "";
  const ir::Shape& w = g.type(n.inputs[1]).shape;  // [M, C / group, k...]
  const int64_t group = n.attr_int("group");
  if (group != 1 && !is_depthwise(g, n))
    return "a convolution of " + std::to_string(group) + " groups";
  if (w.size() < 2 || w[1] >= 16) return "";
  const std::string few = std::to_string(w[1]) + " input channels, fewer than 16";
  if (w.size() != 4)
    return "a convolution of " + std::to_string(w.size() - 2) + " spatial dimensions over " + few;
  if (w[3] == 1)
    return (w[2] == 1 ? "a 1 x 1 convolution with a stride or padding over "
                      : "a window of one column over ") +
           few;
  if (w[3] > kMaxFoldedColumns)
    return "a window of " + std::to_string(w[3]) + " columns, more than the " +
           std::to_string(kMaxFoldedColumns) + " that fold into channels, over " + few;
  return "a window over " + std::to_string(w[1]) + " input channels whose " + std::to_string(w[3]) +
         " columns make " + std::to_string(w[3] * w[1]) + " channels, fewer than 16";
}

std::vector<int> bf16_products_in_series(const ir::Graph& g) {
  std::vector<int> depth(g.tensors.size(), 0);
  for (const ir::Node& n : g.nodes) {
    int deepest = 0;
    bool bf16_operand = false;
    for (int t : n.inputs) {
      if (t < 0) continue;
      deepest = std::max(deepest, depth[static_cast<size_t>(t)]);
      bf16_operand = bf16_operand || g.type(t).dtype == ir::DType::BFloat16;
    }
    const int mine = deepest + (is_product(n) && bf16_operand ? 1 : 0);
    for (int t : n.outputs) depth[static_cast<size_t>(t)] = mine;
  }
  std::vector<int> out;
  for (int t : g.outputs) out.push_back(depth[static_cast<size_t>(t)]);
  return out;
}

}  // namespace tlmc::frontend
