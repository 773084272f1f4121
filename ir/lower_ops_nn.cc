// Lowerings of the anchor operators: convolutions, pooling, matrix products and the
// normalisations and reductions.
#include <cmath>
#include <limits>
#include <utility>

#include "ir/lower_ops.h"
#include "ir/shape_rules.h"

namespace tlmc::ir {
namespace {

int out0(const Node& n) { return n.outputs.at(0); }
const std::string& out_name(const Node& n, TeBuilder& b) { return b.graph().tensor(out0(n)).name; }
Expr f32(double v) { return make_float(v); }
Expr lt(Expr a, Expr b) { return make_binary(BinaryOp::LT, std::move(a), std::move(b)); }
Expr le(Expr a, Expr b) { return make_binary(BinaryOp::LE, std::move(a), std::move(b)); }
Expr all_of(const Expr& a, const Expr& b) { return a ? make_binary(BinaryOp::And, a, b) : b; }

// The geometry of one spatial dimension of a sliding window.
struct Window {
  int64_t in = 0, out = 0, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
  // Extent of the (padded) input that the windows read: (out-1)*s + (k-1)*d + 1.
  int64_t needed() const { return (out - 1) * stride + (kernel - 1) * dilation + 1; }
};

// The windows of a Conv, ConvTranspose or pooling node, from the geometry shape inference
// resolved (defaults, auto_pad, output_shape): one source of truth for both.
std::vector<Window> windows(const Graph& g, const Node& n) {
  const SpatialGeometry geo = spatial_geometry(g, n);
  std::vector<Window> w(static_cast<size_t>(geo.rank()));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = Window{geo.input[i],     geo.output[i],     geo.kernel[i],  geo.strides[i],
                  geo.dilations[i], geo.pads_begin[i], geo.pads_end[i]};
  return w;
}

// x[N, C, spatial...] (in any channel layout: `first` is its first spatial dimension)
// extended to the extents the windows read, `fill` outside the input, in float32 where
// `widen` (x a 16-bit float); x itself when no padding is read.
int pad_input(TeBuilder& b, int x, const std::vector<Window>& w, double fill,
              const std::string& name, size_t first, bool widen = false) {
  const Shape s = b.te(x).shape;
  bool needs = false;
  Shape padded = s;
  for (size_t i = 0; i < w.size(); ++i) {
    padded[first + i] = w[i].needed();
    needs = needs || w[i].pad_begin > 0 || w[i].needed() > w[i].in;
  }
  if (!needs) return x;
  std::vector<Axis> axes = b.axes(padded, "p");
  std::vector<Expr> idx = TeBuilder::vars(axes), src = idx;
  Expr inside;
  for (size_t i = 0; i < w.size(); ++i) {
    Expr v = idx[first + i] - w[i].pad_begin;
    src[first + i] = v;
    inside = all_of(inside, all_of(le(make_int(0), v), lt(v, make_int(w[i].in))));
  }
  const DType t = widen ? DType::Float32 : b.te(x).dtype;
  Expr body = make_select(inside, widen ? b.load_f32(x, src) : b.load(x, src), make_float(fill, t));
  return b.stage(name + ".pad", t, axes, body);
}

// The sum of `product` over the reduction axes, plus the optional bias (input 2) per
// output channel in a stage of its own: Conv and ConvTranspose end alike.
// The role names of a window's positions, outer to inner: "w"; "h", "w"; "d", "h", "w".
std::vector<std::string> window_names(const std::string& prefix, size_t rank) {
  static const char* const kPositions[] = {"d", "h", "w"};
  std::vector<std::string> out;
  for (size_t i = 0; i < rank; ++i)
    out.push_back(rank <= 3 ? prefix + kPositions[3 - rank + i] : prefix + std::to_string(i));
  return out;
}

// Axes of a windowed operator's [N, C, positions...] output: n, `channel`, oh, ow...; or
// n, oh, ow..., `channel` for its [N, positions..., C] output when channels-last; or
// n, `channel`0, oh, ow..., `channel`1 (the block, then the channel within it) when blocked
// (words the language model's vocabulary has: "oc" "0").
std::vector<std::string> windowed_output_names(const std::string& channel, size_t rank,
                                               ChannelLayout layout = {}) {
  std::vector<std::string> names = {"n"};
  if (layout.block) names.push_back(channel + "0");
  if (layout.channels_first()) names.push_back(channel);
  for (const std::string& p : window_names("o", rank)) names.push_back(p);
  if (layout.last) names.push_back(channel);
  if (layout.block) names.push_back(channel + "1");
  return names;
}

// The channel that the indices `o` of a tensor in `layout` address.
Expr channel_of(const std::vector<Expr>& o, ChannelLayout layout) {
  if (layout.block) return o[1] * layout.block + o.back();
  return layout.last ? o.back() : o[1];
}

// The indices, in `layout`, of channel c at batch n and spatial indices `at`.
std::vector<Expr> layout_index(const Expr& n, const Expr& c, const std::vector<Expr>& at,
                               ChannelLayout layout) {
  std::vector<Expr> idx = {n};
  if (layout.block) idx.push_back(make_binary(BinaryOp::FloorDiv, c, make_int(layout.block)));
  if (layout.channels_first()) idx.push_back(c);
  idx.insert(idx.end(), at.begin(), at.end());
  if (layout.last) idx.push_back(c);
  if (layout.block) idx.push_back(make_binary(BinaryOp::FloorMod, c, make_int(layout.block)));
  return idx;
}

void convolution_with_bias(const Node& n, TeBuilder& b, const std::vector<Axis>& axes,
                           const std::vector<Axis>& red, const Expr& product) {
  const TensorType& ot = b.graph().type(out0(n));
  const bool bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  const std::string name = out_name(n, b);
  const int conv =
      b.stage(bias ? name + ".conv" : name, ot.dtype, axes, product, ReduceKind::Sum, red);
  if (!bias) {
    b.bind(out0(n), conv);
    return;
  }
  const ChannelLayout layout = channel_layout(n);
  std::vector<Axis> oa = b.named_axes(
      ot.shape, windowed_output_names("oc", spatial_rank(ot.shape.size(), layout), layout));
  std::vector<Expr> oi = TeBuilder::vars(oa);
  const Expr channel = channel_of(oi, layout);
  b.bind(out0(n),
         b.stage(name, ot.dtype, oa, b.load(conv, oi) + b.load(b.tensor(n.inputs[2]), {channel})));
}

// A convolution computed channels-last: into a [N, spatial..., M] tensor (output channels
// innermost, so a tile vectorises over them; packing the weights in loop order makes them
// contiguous vector operands), which the epilogue writes out in the model's
// [N, M, spatial...] layout, adding the bias.
void lower_conv_channels_last(const Node& n, TeBuilder& b, int padded,
                              const std::vector<Window>& w) {
  const TensorType& ot = b.graph().type(out0(n));
  const int wt = b.tensor(n.inputs[1]);
  const Shape ws = b.te(wt).shape;  // [M, C, k...]
  const size_t rank = w.size();
  Shape cl = {ot.shape[0]};
  for (size_t i = 0; i < rank; ++i) cl.push_back(ot.shape[2 + i]);
  cl.push_back(ot.shape[1]);
  std::vector<std::string> cl_names = {"n"};
  for (const std::string& p : window_names("o", rank)) cl_names.push_back(p);
  cl_names.push_back("oc");
  std::vector<Axis> axes = b.named_axes(cl, cl_names);
  std::vector<Expr> o = TeBuilder::vars(axes);
  std::vector<Axis> red = {b.reduce_axis("ic", ws[1])};
  const std::vector<std::string> taps = window_names("k", rank);
  for (size_t i = 0; i < rank; ++i) red.push_back(b.reduce_axis(taps[i], w[i].kernel));
  std::vector<Expr> r = TeBuilder::vars(red);
  std::vector<Expr> xi = {o[0], r[0]}, wi = {o[rank + 1], r[0]};
  for (size_t i = 0; i < rank; ++i) {
    xi.push_back(o[1 + i] * w[i].stride + r[1 + i] * w[i].dilation);
    wi.push_back(r[1 + i]);
  }
  const std::string name = out_name(n, b);
  const int conv = b.stage(name + ".conv", ot.dtype, axes,
                           b.load_f32(padded, xi) * b.load_f32(wt, wi), ReduceKind::Sum, red);
  std::vector<Axis> oa = b.axes(ot.shape);
  std::vector<Expr> oi = TeBuilder::vars(oa), ci = {oi[0]};
  for (size_t i = 0; i < rank; ++i) ci.push_back(oi[2 + i]);
  ci.push_back(oi[1]);
  Expr y = b.load(conv, ci);
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) y = y + b.load(b.tensor(n.inputs[2]), {oi[1]});
  b.bind(out0(n), b.stage(name, ot.dtype, oa, y));
}

}  // namespace

void lower_conv(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int x = b.tensor(n.inputs[0]), wt = b.tensor(n.inputs[1]);
  const Shape ws = b.te(wt).shape;  // [M, C/group, k...]
  const std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  const std::vector<Window> w = windows(b.graph(), n);
  const ChannelLayout layout = channel_layout(n);
  const size_t first = first_spatial_axis(layout);
  const int64_t group = n.attr_int("group"), m_per_group = ws[0] / group, c_per_group = ws[1];
  // A grouped convolution of a bfloat16 input (a depthwise one under --precision bf16)
  // reads each input element once per tap: its padded copy holds them widened to float32,
  // once, rather than each load widening its own (three operations for one FMA).
  const int padded =
      pad_input(b, x, w, 0.0, out_name(n, b), first, group > 1 && dtype_is_half(b.te(x).dtype));
  if (b.channels_last() && group == 1 && layout.channels_first()) {
    lower_conv_channels_last(n, b, padded, w);
    return;
  }

  std::vector<Axis> axes =
      b.named_axes(ot.shape, windowed_output_names("oc", kernel.size(), layout));
  std::vector<Expr> o = TeBuilder::vars(axes);
  const Expr oc = channel_of(o, layout);
  const std::vector<std::string> taps = window_names("k", kernel.size());
  std::vector<Expr> at;  // the input position each output position's window tap reads
  std::vector<Axis> red;
  // Blocked input of a dense convolution: the input channels as two reduction axes, the
  // block outside the taps and the channel within it inside, so that indices stay affine
  // and the innermost reduction reads a block's contiguous channels.
  const bool blocked_dense = layout.block && group == 1;
  const bool blocked_depthwise = layout.block && c_per_group == 1 && m_per_group == 1;
  if (blocked_dense) red.push_back(b.reduce_axis("ic0", c_per_group / layout.block));
  if (!layout.block || (!blocked_dense && !blocked_depthwise))
    red.push_back(b.reduce_axis("ic", c_per_group));
  const size_t first_tap = red.size();
  for (size_t i = 0; i < kernel.size(); ++i) red.push_back(b.reduce_axis(taps[i], kernel[i]));
  if (blocked_dense) red.push_back(b.reduce_axis("ic1", layout.block));
  std::vector<Expr> r = TeBuilder::vars(red);
  for (size_t i = 0; i < kernel.size(); ++i)
    at.push_back(o[first + i] * w[i].stride + r[first_tap + i] * w[i].dilation);
  std::vector<Expr> xi, wi;
  if (blocked_dense) {
    xi = {o[0], r[0]};
    xi.insert(xi.end(), at.begin(), at.end());
    xi.push_back(r.back());
    wi = {oc, r[0] * layout.block + r.back()};
  } else if (blocked_depthwise) {
    xi = o;
    for (size_t i = 0; i < kernel.size(); ++i) xi[first + i] = at[i];
    wi = {oc, make_int(0)};
  } else {
    const Expr channel =
        group == 1
            ? r[0]
            : make_binary(BinaryOp::FloorDiv, oc, make_int(m_per_group)) * c_per_group + r[0];
    xi = layout_index(o[0], channel, at, layout);
    wi = {oc, r[0]};
  }
  for (size_t i = 0; i < kernel.size(); ++i) wi.push_back(r[first_tap + i]);
  convolution_with_bias(n, b, axes, red, b.load_f32(padded, xi) * b.load_f32(wt, wi));
}

void lower_conv_transpose(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int x = b.tensor(n.inputs[0]), wt = b.tensor(n.inputs[1]);
  const Shape xs = b.te(x).shape;
  const Shape ws = b.te(wt).shape;  // [C, M/group, k...]
  const size_t rank = ws.size() - 2;
  const int64_t group = n.attr_int("group"), c_per_group = ws[0] / group, m_per_group = ws[1];
  const std::vector<Window> w = windows(b.graph(), n);
  std::vector<Axis> axes = b.named_axes(ot.shape, windowed_output_names("oc", rank));
  std::vector<Expr> o = TeBuilder::vars(axes);
  std::vector<Axis> red = {b.reduce_axis("ic", c_per_group)};
  const std::vector<std::string> taps = window_names("k", rank);
  for (size_t i = 0; i < rank; ++i) red.push_back(b.reduce_axis(taps[i], ws[2 + i]));
  std::vector<Expr> r = TeBuilder::vars(red);
  Expr channel =
      group == 1
          ? r[0]
          : make_binary(BinaryOp::FloorDiv, o[1], make_int(m_per_group)) * c_per_group + r[0];
  Expr m_in_group =
      group == 1 ? o[1] : make_binary(BinaryOp::FloorMod, o[1], make_int(m_per_group));
  std::vector<Expr> xi = {o[0], channel}, wi = {channel, m_in_group};
  Expr valid;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t begin = w[i].pad_begin, stride = w[i].stride;
    // Output position o reads input position t / stride where t = o + pad - k * dilation.
    Expr t = o[2 + i] + begin - r[1 + i] * w[i].dilation;
    Expr q = make_binary(BinaryOp::FloorDiv, t, make_int(stride));
    valid = all_of(valid, all_of(le(make_int(0), t), lt(q, make_int(xs[2 + i]))));
    if (stride > 1)
      valid = all_of(valid,
                     make_binary(BinaryOp::EQ, make_binary(BinaryOp::FloorMod, t, make_int(stride)),
                                 make_int(0)));
    xi.push_back(q);
    wi.push_back(r[1 + i]);
  }
  convolution_with_bias(n, b, axes, red,
                        make_select(valid, b.load(x, xi) * b.load(wt, wi), f32(0)));
}

void lower_pool(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int x = b.tensor(n.inputs[0]);
  const bool is_max = n.op == "MaxPool";
  const ChannelLayout layout = channel_layout(n);
  const size_t first = first_spatial_axis(layout);
  const std::vector<Window> w = windows(b.graph(), n);
  std::vector<int64_t> kernel;
  for (const Window& win : w) kernel.push_back(win.kernel);
  const double inf = std::numeric_limits<double>::infinity();
  const int padded = pad_input(b, x, w, is_max ? -inf : 0.0, out_name(n, b), first);
  std::vector<Axis> axes =
      b.named_axes(ot.shape, windowed_output_names("c", kernel.size(), layout));
  std::vector<Expr> o = TeBuilder::vars(axes);
  std::vector<Axis> red;
  const std::vector<std::string> taps = window_names("k", kernel.size());
  for (size_t i = 0; i < kernel.size(); ++i) red.push_back(b.reduce_axis(taps[i], kernel[i]));
  std::vector<Expr> r = TeBuilder::vars(red);
  std::vector<Expr> xi = o;
  for (size_t i = 0; i < kernel.size(); ++i)
    xi[first + i] = o[first + i] * w[i].stride + r[i] * w[i].dilation;
  if (is_max) {
    b.bind(out0(n),
           b.stage(out_name(n, b), ot.dtype, axes, b.load(padded, xi), ReduceKind::Max, red));
    return;
  }
  const int sum =
      b.stage(out_name(n, b) + ".sum", ot.dtype, axes, b.load(padded, xi), ReduceKind::Sum, red);
  // The divisor counts the window's taps inside the input, or inside input and pads when
  // count_include_pad; taps past the pads (ceil_mode) never count.
  const bool include_pad = n.attr_int("count_include_pad") != 0;
  std::vector<Axis> oa = b.axes(ot.shape);
  std::vector<Expr> oi = TeBuilder::vars(oa);
  Expr count = make_int(1);
  for (size_t i = 0; i < w.size(); ++i) {
    Expr start = oi[first + i] * w[i].stride - w[i].pad_begin;
    const int64_t lo = include_pad ? -w[i].pad_begin : 0,
                  hi = include_pad ? w[i].in + w[i].pad_end : w[i].in;
    Expr a = make_binary(BinaryOp::Max, start, make_int(lo));
    Expr e = make_binary(BinaryOp::Min, start + w[i].kernel, make_int(hi));
    count = count * (e - a);
  }
  Expr avg = make_binary(BinaryOp::Div, b.load(sum, oi), make_cast(ot.dtype, count));
  b.bind(out0(n), b.stage(out_name(n, b), ot.dtype, oa, avg));
}

void lower_global_average_pool(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int x = b.tensor(n.inputs[0]);
  const Shape xs = b.te(x).shape;
  const ChannelLayout layout = channel_layout(n);
  const size_t first = first_spatial_axis(layout), spatial = spatial_rank(xs.size(), layout);
  std::vector<Axis> axes = b.axes(ot.shape);
  std::vector<Expr> o = TeBuilder::vars(axes);
  std::vector<Axis> red;
  std::vector<Expr> xi = o;
  int64_t count = 1;
  for (size_t i = first; i < first + spatial; ++i) {
    red.push_back(b.reduce_axis("r" + std::to_string(i), xs[i]));
    xi[i] = make_var(red.back().var_id, red.back().name);
    count *= xs[i];
  }
  const int sum =
      b.stage(out_name(n, b) + ".sum", ot.dtype, axes, b.load(x, xi), ReduceKind::Sum, red);
  std::vector<Axis> oa = b.axes(ot.shape);
  std::vector<Expr> oi = TeBuilder::vars(oa);
  b.bind(out0(n), b.stage(out_name(n, b), ot.dtype, oa,
                          make_binary(BinaryOp::Div, b.load(sum, oi),
                                      make_float(static_cast<double>(count), ot.dtype))));
}

void lower_matmul(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int a = b.tensor(n.inputs[0]), bb = b.tensor(n.inputs[1]);
  const Shape as = b.te(a).shape;
  const Shape bs = b.te(bb).shape;
  const int64_t k = as.back();
  // Output dims: batch..., [i if A is not 1-D], [j if B is not 1-D].
  const size_t out_rank = ot.shape.size();
  const bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  const size_t batch = out_rank - (a_vec ? 0 : 1) - (b_vec ? 0 : 1);
  std::vector<std::string> names;
  for (size_t i = 0; i < batch; ++i) names.push_back("b" + std::to_string(i));
  if (!a_vec) names.push_back("i");
  if (!b_vec) names.push_back("j");
  std::vector<Axis> axes = b.named_axes(ot.shape, names);
  std::vector<Expr> o = TeBuilder::vars(axes);
  Axis rk = b.reduce_axis("k", k);
  Expr kv = make_var(rk.var_id, rk.name);
  std::vector<Expr> ob(o.begin(), o.begin() + static_cast<long>(batch));
  auto batch_index = [&](const Shape& s, size_t own) {  // own: trailing matrix dims of s
    std::vector<Expr> idx;
    const size_t nb = s.size() - own;
    for (size_t i = 0; i < nb; ++i) idx.push_back(s[i] == 1 ? make_int(0) : ob[batch - nb + i]);
    return idx;
  };
  std::vector<Expr> ai = a_vec ? std::vector<Expr>{} : batch_index(as, 2);
  if (!a_vec) ai.push_back(o[batch]);
  ai.push_back(kv);
  std::vector<Expr> bi = b_vec ? std::vector<Expr>{} : batch_index(bs, 2);
  bi.push_back(kv);
  if (!b_vec) bi.push_back(o[out_rank - 1]);
  b.bind(out0(n), b.stage(out_name(n, b), ot.dtype, axes, b.load_f32(a, ai) * b.load_f32(bb, bi),
                          ReduceKind::Sum, {rk}));
}

void lower_gemm(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int a = b.tensor(n.inputs[0]), bb = b.tensor(n.inputs[1]);
  const bool ta = n.attr_int("transA") != 0, tb = n.attr_int("transB") != 0;
  const int64_t k = b.te(a).shape[ta ? 0 : 1];
  const double alpha = n.attr_float("alpha"), beta = n.attr_float("beta");
  const bool has_c = n.inputs.size() > 2 && n.inputs[2] >= 0 && beta != 0.0;
  std::vector<Axis> axes = b.named_axes(ot.shape, {"i", "j"});
  std::vector<Expr> o = TeBuilder::vars(axes);
  Axis rk = b.reduce_axis("k", k);
  Expr kv = make_var(rk.var_id, rk.name);
  Expr prod = b.load_f32(a, ta ? std::vector<Expr>{kv, o[0]} : std::vector<Expr>{o[0], kv}) *
              b.load_f32(bb, tb ? std::vector<Expr>{o[1], kv} : std::vector<Expr>{kv, o[1]});
  const bool plain = alpha == 1.0 && !has_c;
  const int mm = b.stage(plain ? out_name(n, b) : out_name(n, b) + ".mm", ot.dtype, axes, prod,
                         ReduceKind::Sum, {rk});
  if (plain) {
    b.bind(out0(n), mm);
    return;
  }
  std::vector<Axis> oa = b.axes(ot.shape);
  std::vector<Expr> oi = TeBuilder::vars(oa);
  Expr y = b.load(mm, oi);
  if (alpha != 1.0) y = y * f32(alpha);
  if (has_c) {
    Expr c = b.broadcast_load(b.tensor(n.inputs[2]), oi);
    y = y + (beta == 1.0 ? c : c * f32(beta));
  }
  b.bind(out0(n), b.stage(out_name(n, b), ot.dtype, oa, y));
}

namespace {
// Axes over `shape` where dimensions from `first` on (or only `axis`) are kept at extent 1.
Shape collapsed(const Shape& s, size_t first, size_t last) {
  Shape c = s;
  for (size_t i = first; i < last; ++i) c[i] = 1;
  return c;
}
}  // namespace

void lower_softmax(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int x = b.tensor(n.inputs[0]);
  const Shape& s = ot.shape;
  int64_t axis = n.attr_int("axis");
  if (axis < 0) axis += static_cast<int64_t>(s.size());
  const size_t ax = static_cast<size_t>(axis);
  const std::string& name = out_name(n, b);
  auto row_index = [&](std::vector<Expr> idx, Expr along) {  // idx with axis `ax` replaced
    idx[ax] = std::move(along);
    return idx;
  };
  // max over the axis
  std::vector<Axis> ma = b.axes(collapsed(s, ax, ax + 1));
  Axis r1 = b.reduce_axis("r", s[ax]);
  const int mx = b.stage(name + ".max", ot.dtype, ma,
                         b.load(x, row_index(TeBuilder::vars(ma), make_var(r1.var_id, r1.name))),
                         ReduceKind::Max, {r1});
  // e = exp(x - max), a stage of its own: the scheduler computes it once per tile for the
  // sum and the output (is_kept_for_a_reduction) instead of inlining it into both.
  std::vector<Axis> ea = b.axes(s);
  std::vector<Expr> ei = TeBuilder::vars(ea);
  const int e =
      b.stage(name + ".exp", ot.dtype, ea,
              make_unary(UnaryOp::Exp, b.load(x, ei) - b.load(mx, row_index(ei, make_int(0)))));
  // sum of e over the axis
  std::vector<Axis> sa = b.axes(collapsed(s, ax, ax + 1));
  std::vector<Expr> si = TeBuilder::vars(sa);
  Axis r2 = b.reduce_axis("r", s[ax]);
  const int sum =
      b.stage(name + ".sum", ot.dtype, sa, b.load(e, row_index(si, make_var(r2.var_id, r2.name))),
              ReduceKind::Sum, {r2});
  // e / sum
  std::vector<Axis> oa = b.axes(s);
  std::vector<Expr> oi = TeBuilder::vars(oa), ri = row_index(oi, make_int(0));
  // A product by the row's reciprocal, not a division per element: the reciprocal is the
  // same along the row, and the generated loop computes it once (Softmax [12,128,128] 71 ->
  // 69 us, LayerNormalization [128,768] 11 -> 10 us, -O0, 2-core Zen 4); at most 1 ulp more
  // error than the division.
  Expr y = b.load(e, oi) * make_binary(BinaryOp::Div, f32(1), b.load(sum, ri));
  b.bind(out0(n), b.stage(name, ot.dtype, oa, y));
}

void lower_layer_norm(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int x = b.tensor(n.inputs[0]);
  const Shape& s = ot.shape;
  int64_t axis = n.attr_int("axis");
  if (axis < 0) axis += static_cast<int64_t>(s.size());
  const size_t ax = static_cast<size_t>(axis);
  const std::string& name = out_name(n, b);
  int64_t count = 1;
  for (size_t i = ax; i < s.size(); ++i) count *= s[i];
  const Expr inv_count = make_float(1.0 / static_cast<double>(count));
  // Sum over the normalised dims, as an index into x for a collapsed-row index `row`.
  auto reduce_over = [&](std::vector<Axis>& red) {
    red.clear();
    for (size_t i = ax; i < s.size(); ++i)
      red.push_back(b.reduce_axis("r" + std::to_string(i), s[i]));
  };
  auto x_at = [&](const std::vector<Expr>& row, const std::vector<Axis>& red) {
    std::vector<Expr> idx = row;
    for (size_t i = ax; i < s.size(); ++i) idx[i] = make_var(red[i - ax].var_id, red[i - ax].name);
    return b.load(x, idx);
  };
  auto zeros_from_axis = [&](std::vector<Expr> idx) {
    for (size_t i = ax; i < idx.size(); ++i) idx[i] = make_int(0);
    return idx;
  };
  std::vector<Axis> red;
  std::vector<Axis> ma = b.axes(collapsed(s, ax, s.size()));
  reduce_over(red);
  const int sum =
      b.stage(name + ".sum", ot.dtype, ma, x_at(TeBuilder::vars(ma), red), ReduceKind::Sum, red);
  std::vector<Axis> va = b.axes(collapsed(s, ax, s.size()));
  std::vector<Expr> vi = TeBuilder::vars(va);
  reduce_over(red);
  Expr d = x_at(vi, red) - b.load(sum, vi) * inv_count;
  const int sq = b.stage(name + ".sqsum", ot.dtype, va, d * d, ReduceKind::Sum, red);
  std::vector<Axis> oa = b.axes(s);
  std::vector<Expr> oi = TeBuilder::vars(oa), ri = zeros_from_axis(oi);
  Expr mean = b.load(sum, ri) * inv_count;
  Expr var = b.load(sq, ri) * inv_count;
  // As Softmax: the row's 1 / sqrt(var + eps) once, and a product per element.
  Expr y = (b.load(x, oi) - mean) *
           make_binary(BinaryOp::Div, f32(1),
                       make_unary(UnaryOp::Sqrt, var + f32(n.attr_float("epsilon"))));
  y = y * b.broadcast_load(b.tensor(n.inputs[1]), oi);
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) y = y + b.broadcast_load(b.tensor(n.inputs[2]), oi);
  b.bind(out0(n), b.stage(name, ot.dtype, oa, y));
}

void lower_reduce(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int x = b.tensor(n.inputs[0]);
  const Shape xs = b.te(x).shape;
  std::vector<bool> reduced(xs.size(), false);
  for (int a : reduce_axes(b.graph(), n)) reduced[static_cast<size_t>(a)] = true;
  const bool keep = n.attr_int("keepdims") != 0;
  std::vector<Axis> axes = b.axes(ot.shape);
  std::vector<Expr> o = TeBuilder::vars(axes);
  std::vector<Axis> red;
  std::vector<Expr> xi;
  int64_t count = 1;
  size_t next_out = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (!reduced[i]) {
      xi.push_back(o[next_out++]);
      continue;
    }
    red.push_back(b.reduce_axis("r" + std::to_string(i), xs[i]));
    xi.push_back(make_var(red.back().var_id, red.back().name));
    count *= xs[i];
    if (keep) ++next_out;
  }
  const std::string& name = out_name(n, b);
  if (red.empty()) {  // nothing to reduce: a copy
    b.bind(out0(n), b.stage(name, ot.dtype, axes, b.load(x, xi)));
    return;
  }
  const bool mean = n.op == "ReduceMean";
  const int sum =
      b.stage(mean ? name + ".sum" : name, ot.dtype, axes, b.load(x, xi), ReduceKind::Sum, red);
  if (!mean) {
    b.bind(out0(n), sum);
    return;
  }
  std::vector<Axis> oa = b.axes(ot.shape);
  std::vector<Expr> oi = TeBuilder::vars(oa);
  b.bind(out0(n),
         b.stage(name, ot.dtype, oa,
                 b.load(sum, oi) * make_float(1.0 / static_cast<double>(count), ot.dtype)));
}

}  // namespace tlmc::ir
