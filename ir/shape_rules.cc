#include "ir/shape_rules.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace tlmc::ir {
namespace {

[[noreturn]] void fail(const Node& n, const std::string& message) {
  throw Diagnostic(n.loc, n.describe() + " " + message);
}

bool is_convolution(const Node& n) { return n.op == "Conv" || n.op == "ConvTranspose"; }

// A per-spatial-axis attribute; absent (AveragePool has no dilations at opset 17) or empty
// means `fallback` on every axis.
std::vector<int64_t> per_axis(const Node& n, const std::string& key, int rank, int64_t fallback,
                              int64_t min_value, const Shape& x) {
  if (!n.attrs.count(key)) return std::vector<int64_t>(static_cast<size_t>(rank), fallback);
  const std::vector<int64_t>& v = n.attr_ints(key);
  if (v.empty()) return std::vector<int64_t>(static_cast<size_t>(rank), fallback);
  if (static_cast<int>(v.size()) != rank)
    fail(n, "has " + key + " " + shape_str(v) + " of length " + std::to_string(v.size()) +
                ", expected " + std::to_string(rank) + " (one per spatial axis of input " +
                shape_str(x) + ")");
  for (int64_t e : v)
    if (e < min_value)
      fail(n, "has " + key + " " + shape_str(v) + ": every value must be at least " +
                  std::to_string(min_value));
  return v;
}

std::vector<int64_t> kernel_of(const Graph& g, const Node& n, int rank, const Shape& x) {
  if (!is_convolution(n)) {
    const std::vector<int64_t>& k = n.attr_ints("kernel_shape");
    if (static_cast<int>(k.size()) != rank)
      fail(n, "has kernel_shape " + shape_str(k) + " of length " + std::to_string(k.size()) +
                  ", expected " + std::to_string(rank) + " (one per spatial axis of input " +
                  shape_str(x) + ")");
    for (int64_t e : k)
      if (e < 1) fail(n, "has kernel_shape " + shape_str(k) + ": every value must be at least 1");
    return k;
  }
  const Shape& w = g.type(n.inputs.at(1)).shape;
  if (static_cast<int>(w.size()) != rank + 2)
    fail(n, "weight W of shape " + shape_str(w) + " must have rank " + std::to_string(rank + 2) +
                " (output channels, input channels per group and one per spatial axis of "
                "input X " +
                shape_str(x) + ")");
  std::vector<int64_t> k(w.begin() + 2, w.end());
  const std::vector<int64_t>& attr = n.attr_ints("kernel_shape");
  if (!attr.empty() && attr != k)
    fail(n, "has kernel_shape " + shape_str(attr) + " but its weight W has shape " + shape_str(w));
  for (int64_t e : k)
    if (e < 1) fail(n, "weight W of shape " + shape_str(w) + " has an empty kernel");
  return k;
}

// Splits a total padding between the two ends; the odd one goes to the end when
// `extra_at_end`, else to the beginning.
void split_padding(int64_t total, bool extra_at_end, int64_t& begin, int64_t& end) {
  begin = extra_at_end ? total / 2 : total - total / 2;
  end = total - begin;
}

void forward_axis(const Node& n, const std::string& auto_pad, bool ceil_mode, size_t i,
                  SpatialGeometry& s) {
  const int64_t in = s.input[i], stride = s.strides[i];
  const int64_t effective_kernel = (s.kernel[i] - 1) * s.dilations[i] + 1;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    s.output[i] = (in + stride - 1) / stride;
    int64_t total = std::max<int64_t>(0, (s.output[i] - 1) * stride + effective_kernel - in);
    split_padding(total, auto_pad == "SAME_UPPER", s.pads_begin[i], s.pads_end[i]);
    return;
  }
  if (auto_pad == "VALID") s.pads_begin[i] = s.pads_end[i] = 0;
  const int64_t padded = in + s.pads_begin[i] + s.pads_end[i];
  if (padded < effective_kernel)
    fail(n, "window of extent " + std::to_string(effective_kernel) + " (kernel " +
                shape_str(s.kernel) + ", dilations " + shape_str(s.dilations) +
                ") does not fit spatial axis " + std::to_string(i) + " of extent " +
                std::to_string(in) + " with pads " + std::to_string(s.pads_begin[i]) + " and " +
                std::to_string(s.pads_end[i]));
  if (!ceil_mode || auto_pad == "VALID") {
    s.output[i] = (padded - effective_kernel) / stride + 1;
    return;
  }
  s.output[i] = (padded - effective_kernel + stride - 1) / stride + 1;
  // A last window starting in the end padding is dropped.
  if ((s.output[i] - 1) * stride >= in + s.pads_begin[i]) --s.output[i];
}

void transposed_axis(const Node& n, const std::string& auto_pad, size_t i, SpatialGeometry& s) {
  const int64_t in = s.input[i], stride = s.strides[i];
  const int64_t effective_kernel = (s.kernel[i] - 1) * s.dilations[i] + 1;
  const int64_t full = stride * (in - 1) + s.output_padding[i] + effective_kernel;
  const std::vector<int64_t>& output_shape = n.attr_ints("output_shape");
  const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  if (!output_shape.empty() || same) {
    const size_t skip = output_shape.size() == s.input.size() ? 0 : 2;
    s.output[i] = output_shape.empty() ? in * stride : output_shape[i + skip];
    int64_t total = full - s.output[i];
    if (total < 0)
      fail(n, "cannot produce spatial extent " + std::to_string(s.output[i]) + " on axis " +
                  std::to_string(i) + ": at most " + std::to_string(full) +
                  " is reachable from input extent " + std::to_string(in));
    // ONNX: SAME_UPPER puts total / 2 at the beginning, anything else puts it at the end.
    const int64_t half = total / 2, rest = total - total / 2;
    s.pads_begin[i] = auto_pad == "SAME_UPPER" ? half : rest;
    s.pads_end[i] = auto_pad == "SAME_UPPER" ? rest : half;
    return;
  }
  if (auto_pad == "VALID") s.pads_begin[i] = s.pads_end[i] = 0;
  s.output[i] = full - s.pads_begin[i] - s.pads_end[i];
}

}  // namespace

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  std::optional<Shape> b = broadcast_shapes(from, to);
  return b && *b == to;
}

std::optional<int> normalize_axis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

bool is_channels_last(const Node& n) {
  auto it = n.attrs.find("channels_last");
  return it != n.attrs.end() && std::get<int64_t>(it->second.value) != 0;
}

ChannelLayout channel_layout(const Node& n) {
  ChannelLayout l;
  l.last = is_channels_last(n);
  auto it = n.attrs.find("channel_block");
  if (it != n.attrs.end()) l.block = std::get<int64_t>(it->second.value);
  return l;
}

size_t first_spatial_axis(ChannelLayout l) { return l.last ? 1 : 2; }

size_t spatial_rank(size_t rank, ChannelLayout l) {
  const size_t other = l.block ? 3 : 2;
  return rank >= other ? rank - other : 0;
}

int64_t channel_count(const Shape& s, ChannelLayout l) {
  if (l.block) return s.at(1) * s.back();
  return l.last ? s.back() : s.at(1);
}

Shape layout_shape(const Shape& channels_first, ChannelLayout l) {
  if (l.channels_first()) return channels_first;
  Shape s = {channels_first.at(0)};
  if (l.block) s.push_back(channels_first.at(1) / l.block);
  s.insert(s.end(), channels_first.begin() + 2, channels_first.end());
  s.push_back(l.last ? channels_first.at(1) : l.block);
  return s;
}

Shape channels_first_shape(const Shape& s, ChannelLayout l) {
  if (l.channels_first()) return s;
  Shape cf = {s.at(0), channel_count(s, l)};
  cf.insert(cf.end(), s.begin() + (l.block ? 2 : 1), s.end() - 1);
  return cf;
}

std::vector<uint8_t> move_channels(const std::vector<uint8_t>& bytes, const Shape& channels_first,
                                   size_t elem_size, ChannelLayout l, bool to_layout) {
  if (l.channels_first()) return bytes;
  std::vector<uint8_t> out(bytes.size());
  const int64_t batch = channels_first.at(0), channels = channels_first.at(1);
  const int64_t plane = batch * channels == 0 ? 0 : shape_numel(channels_first) / batch / channels;
  // Element (n, c, p) of [N, C, positions] in the layout: [N, positions, C], or
  // [N, C/B, positions, B].
  const int64_t b = l.block;
  auto moved = [&](int64_t n, int64_t c, int64_t p) {
    return l.last ? (n * plane + p) * channels + c
                  : ((n * (channels / b) + c / b) * plane + p) * b + c % b;
  };
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < plane; ++p) {
        const int64_t first = (n * channels + c) * plane + p, there = moved(n, c, p);
        const int64_t src = to_layout ? first : there, dst = to_layout ? there : first;
        std::memcpy(out.data() + static_cast<size_t>(dst) * elem_size,
                    bytes.data() + static_cast<size_t>(src) * elem_size, elem_size);
      }
  return out;
}

SpatialGeometry spatial_geometry(const Graph& g, const Node& n) {
  const Shape& x = g.type(n.inputs.at(0)).shape;
  const ChannelLayout layout = channel_layout(n);
  const size_t others = layout.block ? 3 : 2;  // N, C (and the block)
  if (x.size() < others + 1 || x.size() > others + 3)
    fail(n, "input X must have rank " + std::to_string(others + 1) + ", " +
                std::to_string(others + 2) + " or " + std::to_string(others + 3) + " (N, C" +
                (layout.block ? ", its block" : "") + " and 1 to 3 spatial axes), got " +
                shape_str(x));
  const int rank = static_cast<int>(x.size() - others);
  SpatialGeometry s;
  const auto first_spatial = x.begin() + static_cast<std::ptrdiff_t>(first_spatial_axis(layout));
  s.input.assign(first_spatial, first_spatial + rank);
  s.kernel = kernel_of(g, n, rank, x);
  s.strides = per_axis(n, "strides", rank, 1, 1, x);
  s.dilations = per_axis(n, "dilations", rank, 1, 1, x);
  s.output_padding = n.op == "ConvTranspose" ? per_axis(n, "output_padding", rank, 0, 0, x)
                                             : std::vector<int64_t>(static_cast<size_t>(rank));
  s.output.assign(static_cast<size_t>(rank), 0);

  const std::string& auto_pad = n.attr_string("auto_pad");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" &&
      auto_pad != "VALID")
    fail(n, "has auto_pad '" + auto_pad + "' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)");
  const std::vector<int64_t>& pads = n.attr_ints("pads");
  if (!pads.empty() && static_cast<int>(pads.size()) != 2 * rank)
    fail(n, "has pads " + shape_str(pads) + " of length " + std::to_string(pads.size()) +
                ", expected " + std::to_string(2 * rank) +
                " (begin and end of each spatial axis of input " + shape_str(x) + ")");
  for (int64_t p : pads)
    if (p < 0) fail(n, "has pads " + shape_str(pads) + ": every value must be at least 0");
  const bool explicit_pads = std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p; });
  if (explicit_pads && auto_pad != "NOTSET")
    fail(n, "has both pads " + shape_str(pads) + " and auto_pad '" + auto_pad +
                "'; ONNX allows only one of them");
  s.pads_begin.assign(static_cast<size_t>(rank), 0);
  s.pads_end.assign(static_cast<size_t>(rank), 0);
  for (int i = 0; i < rank && !pads.empty(); ++i) {
    s.pads_begin[static_cast<size_t>(i)] = pads[static_cast<size_t>(i)];
    s.pads_end[static_cast<size_t>(i)] = pads[static_cast<size_t>(i) + static_cast<size_t>(rank)];
  }

  if (n.op == "ConvTranspose") {
    const std::vector<int64_t>& output_shape = n.attr_ints("output_shape");
    if (!output_shape.empty() && static_cast<int>(output_shape.size()) != rank &&
        static_cast<int>(output_shape.size()) != rank + 2)
      fail(n, "has output_shape " + shape_str(output_shape) + " of length " +
                  std::to_string(output_shape.size()) + ", expected " + std::to_string(rank) +
                  " (the spatial extents) or " + std::to_string(rank + 2));
    for (size_t i = 0; i < s.input.size(); ++i) transposed_axis(n, auto_pad, i, s);
  } else {
    const bool ceil_mode = n.attrs.count("ceil_mode") && n.attr_int("ceil_mode") != 0;
    for (size_t i = 0; i < s.input.size(); ++i) forward_axis(n, auto_pad, ceil_mode, i, s);
  }
  for (size_t i = 0; i < s.output.size(); ++i)
    if (s.output[i] < 1)
      fail(n, "would produce an empty output: spatial extents " + shape_str(s.output) +
                  " from input " + shape_str(x));
  return s;
}

std::vector<int64_t> constant_ints(const Graph& g, const Node& n, size_t i, const std::string& what,
                                   ValueBound bound) {
  const Tensor& t = g.tensor(n.inputs.at(i));
  if (t.type.dtype != DType::Int64)
    fail(n, "does not support " + what + " dtype " + std::string(dtype_name(t.type.dtype)) +
                " (supported: int64)");
  if (t.kind != TensorKind::Weight || !t.data)
    fail(n, "needs its " + what + " '" + t.name + "' to be a constant weight");
  if (t.type.shape.size() != 1)
    fail(n,
         "needs its " + what + " '" + t.name + "' to be 1-D, got shape " + shape_str(t.type.shape));
  std::vector<int64_t> values = weight_ints(t);
  if (bound == ValueBound::AsAttributes)
    for (int64_t v : values)
      if (v > kMaxAttributeMagnitude || v < -kMaxAttributeMagnitude)
        fail(n, "has the value " + std::to_string(v) + " in its " + what + " '" + t.name +
                    "', beyond tlmc's limit of +-(2^31 - 1)");
  return values;
}

double constant_scalar(const Graph& g, const Node& n, size_t i, const std::string& what) {
  const Tensor& t = g.tensor(n.inputs.at(i));
  if (t.kind != TensorKind::Weight || !t.data)
    fail(n, "needs its " + what + " '" + t.name + "' to be a constant weight");
  if (t.type.shape.size() > 1 || t.type.numel() != 1)
    fail(n, "needs its " + what + " '" + t.name + "' to be a scalar, got shape " +
                shape_str(t.type.shape));
  return weight_values(t).at(0);
}

DimRange shape_range(const Node& n, int64_t rank) {
  auto clamp = [&](int64_t v) {
    return std::min(std::max(v < 0 ? v + rank : v, int64_t{0}), rank);
  };
  const int64_t begin = clamp(n.attr_int("start"));
  return DimRange{begin, std::max(begin, clamp(n.attr_int("end")))};
}

SliceGeometry slice_geometry(const Graph& g, const Node& n) {
  const Shape& x = g.type(n.inputs.at(0)).shape;
  const int64_t rank = static_cast<int64_t>(x.size());
  // ONNX clamps starts and ends to the axis (exporters write INT64_MAX for "to the end").
  const std::vector<int64_t> starts = constant_ints(g, n, 1, "starts", ValueBound::Clamped);
  const std::vector<int64_t> ends = constant_ints(g, n, 2, "ends", ValueBound::Clamped);
  if (starts.size() != ends.size())
    fail(n, "has starts " + shape_str(starts) + " and ends " + shape_str(ends) +
                " of different lengths");
  std::vector<int64_t> axes, steps(starts.size(), 1);
  for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  const bool has_axes = n.inputs.size() > 3 && n.inputs[3] >= 0;
  const bool has_steps = n.inputs.size() > 4 && n.inputs[4] >= 0;
  if (has_axes) axes = constant_ints(g, n, 3, "axes");
  if (has_steps) steps = constant_ints(g, n, 4, "steps");
  if (axes.size() != starts.size())
    fail(n, "has axes " + shape_str(axes) + " of length " + std::to_string(axes.size()) + " for " +
                std::to_string(starts.size()) + " starts");
  if (steps.size() != starts.size())
    fail(n, "has steps " + shape_str(steps) + " of length " + std::to_string(steps.size()) +
                " for " + std::to_string(starts.size()) + " starts");
  SliceGeometry s{std::vector<int64_t>(x.size(), 0), std::vector<int64_t>(x.size(), 1), x};
  std::vector<bool> seen(x.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const std::optional<int> axis = normalize_axis(axes[i], rank);
    if (!axis)
      fail(n, "has axis " + std::to_string(axes[i]) + " out of range for input of shape " +
                  shape_str(x));
    const size_t a = static_cast<size_t>(*axis);
    if (seen[a])
      fail(n, "has axes " + shape_str(axes) + " naming axis " + std::to_string(a) + " twice");
    seen[a] = true;
    const int64_t step = steps[i], dim = x[a];
    if (step == 0) fail(n, "has step 0 on axis " + std::to_string(a));
    // Negative indices count from the end; then both ends are clamped to the elements a
    // walk in the step's direction can reach ([0, dim] forwards, [-1, dim - 1] backwards).
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      start = std::min(std::max(start, int64_t{0}), dim);
      end = std::min(std::max(end, int64_t{0}), dim);
    } else {
      start = std::min(std::max(start, int64_t{-1}), dim - 1);
      end = std::min(std::max(end, int64_t{-1}), dim - 1);
    }
    const int64_t span = step > 0 ? end - start : start - end;
    const int64_t stride = step > 0 ? step : -step;
    s.output[a] = span <= 0 ? 0 : (span + stride - 1) / stride;
    s.start[a] = s.output[a] == 0 ? 0 : start;
    s.step[a] = step;
  }
  return s;
}

SplitGeometry split_geometry(const Graph& g, const Node& n) {
  const Shape& x = g.type(n.inputs.at(0)).shape;
  const int64_t axis_attr = n.attr_int("axis");
  const std::optional<int> axis = normalize_axis(axis_attr, static_cast<int64_t>(x.size()));
  if (!axis)
    fail(n, "has axis " + std::to_string(axis_attr) + " out of range for input of shape " +
                shape_str(x));
  const int64_t extent = x[static_cast<size_t>(*axis)];
  const int64_t parts = static_cast<int64_t>(n.outputs.size());
  SplitGeometry s{*axis, {}};
  if (n.inputs.size() < 2 || n.inputs[1] < 0) {
    if (extent % parts != 0)
      fail(n, "cannot split axis " + std::to_string(*axis) + " of extent " +
                  std::to_string(extent) + " into " + std::to_string(parts) + " equal parts");
    s.sizes.assign(static_cast<size_t>(parts), extent / parts);
    return s;
  }
  s.sizes = constant_ints(g, n, 1, "split");
  if (static_cast<int64_t>(s.sizes.size()) != parts)
    fail(n, "has split " + shape_str(s.sizes) + " of " + std::to_string(s.sizes.size()) +
                " parts for " + std::to_string(parts) + " outputs");
  int64_t sum = 0;
  for (int64_t p : s.sizes) {
    if (p < 0) fail(n, "has split " + shape_str(s.sizes) + " with a negative part");
    sum += p;
  }
  if (sum != extent)
    fail(n, "has split " + shape_str(s.sizes) + " summing to " + std::to_string(sum) +
                ", but axis " + std::to_string(*axis) + " has extent " + std::to_string(extent));
  return s;
}

PadGeometry pad_geometry(const Graph& g, const Node& n) {
  const Shape& x = g.type(n.inputs.at(0)).shape;
  const size_t rank = x.size();
  PadGeometry p{PadMode::Constant, {}, {}, 0.0, x};
  const std::string& mode = n.attr_string("mode");
  if (mode == "reflect")
    p.mode = PadMode::Reflect;
  else if (mode == "edge")
    p.mode = PadMode::Edge;
  else if (mode != "constant")
    fail(n, "has mode '" + mode + "' (expected constant, reflect or edge)");
  const std::vector<int64_t> pads = constant_ints(g, n, 1, "pads");
  if (pads.size() != 2 * rank)
    fail(n, "has pads " + shape_str(pads) + " of length " + std::to_string(pads.size()) +
                ", expected " + std::to_string(2 * rank) +
                " (begin and end of each axis of input " + shape_str(x) + ")");
  p.begin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  p.end.assign(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
  for (size_t d = 0; d < rank; ++d) {
    p.output[d] = x[d] + p.begin[d] + p.end[d];
    if (p.output[d] < 0)
      fail(n, "has pads " + shape_str(pads) + " that remove more than the " + std::to_string(x[d]) +
                  " elements of axis " + std::to_string(d));
    const int64_t widest = std::max(p.begin[d], p.end[d]);
    if (p.mode == PadMode::Reflect && widest > 0 && widest >= x[d])
      fail(n, "has pads " + shape_str(pads) + " too wide for mode 'reflect': axis " +
                  std::to_string(d) + " of extent " + std::to_string(x[d]) +
                  " can be padded by at most " + std::to_string(std::max<int64_t>(x[d] - 1, 0)));
    if (p.mode == PadMode::Edge && widest > 0 && x[d] == 0)
      fail(n, "cannot pad axis " + std::to_string(d) + " of extent 0 in mode 'edge'");
  }
  if (n.inputs.size() > 2 && n.inputs[2] >= 0) p.value = constant_scalar(g, n, 2, "constant_value");
  return p;
}

int64_t range_count(const Graph& g, const Node& n) {
  const DType t = g.type(n.inputs.at(0)).dtype;
  if (t == DType::Float32) {
    const float start = static_cast<float>(constant_scalar(g, n, 0, "start"));
    const float limit = static_cast<float>(constant_scalar(g, n, 1, "limit"));
    const float delta = static_cast<float>(constant_scalar(g, n, 2, "delta"));
    if (delta == 0) fail(n, "has delta 0");
    const double count = std::ceil(static_cast<double>(limit - start) / delta);
    if (!(count < static_cast<double>(int64_t{1} << 48)))
      fail(n, "would produce " + std::to_string(count) + " elements");
    return count > 0 ? static_cast<int64_t>(count) : 0;
  }
  auto value = [&](size_t i, const char* what) {
    constant_scalar(g, n, i, what);  // the checks
    return weight_ints(g.tensor(n.inputs[i])).at(0);
  };
  const int64_t start = value(0, "start"), limit = value(1, "limit"), delta = value(2, "delta");
  if (delta == 0) fail(n, "has delta 0");
  // In unsigned arithmetic, which holds the distance between any two int64 values.
  const int64_t from = delta > 0 ? start : limit, to = delta > 0 ? limit : start;
  if (to <= from) return 0;
  const uint64_t span = static_cast<uint64_t>(to) - static_cast<uint64_t>(from);
  const uint64_t stride =
      delta > 0 ? static_cast<uint64_t>(delta) : uint64_t{0} - static_cast<uint64_t>(delta);
  const uint64_t count = 1 + (span - 1) / stride;
  if (count > static_cast<uint64_t>(kMaxDimension))
    fail(n, "would produce " + std::to_string(count) +
                " elements, beyond the largest extent tlmc compiles (2^31 - 1)");
  return static_cast<int64_t>(count);
}

std::vector<int> reduce_axes(const Graph& g, const Node& n) {
  const Shape& x = g.type(n.inputs.at(0)).shape;
  std::vector<int64_t> given;
  bool noop_when_empty = false;
  if (n.op == "ReduceSum") {
    noop_when_empty = n.attr_int("noop_with_empty_axes") != 0;
    if (n.inputs.size() > 1 && n.inputs[1] >= 0) {
      const Tensor& axes = g.tensor(n.inputs[1]);
      if (axes.kind != TensorKind::Weight || !axes.data)
        fail(n, "needs its axes '" + axes.name + "' to be a constant weight");
      if (axes.type.dtype != DType::Int64)
        fail(n, "does not support axes dtype " + std::string(dtype_name(axes.type.dtype)) +
                    " (supported: int64)");
      if (axes.type.shape.size() != 1)
        fail(n, "needs its axes '" + axes.name + "' to be 1-D, got shape " +
                    shape_str(axes.type.shape));
      given = weight_ints(axes);
    }
  } else {
    given = n.attr_ints("axes");
  }
  std::vector<int> axes;
  if (given.empty()) {
    if (noop_when_empty) return axes;
    for (size_t i = 0; i < x.size(); ++i) axes.push_back(static_cast<int>(i));
    return axes;
  }
  for (int64_t a : given) {
    std::optional<int> axis = normalize_axis(a, static_cast<int64_t>(x.size()));
    if (!axis) fail(n, "has axis " + std::to_string(a) + " out of range for input " + shape_str(x));
    if (std::find(axes.begin(), axes.end(), *axis) != axes.end())
      fail(n, "has axes " + shape_str(given) + " naming axis " + std::to_string(*axis) + " twice");
    axes.push_back(*axis);
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

}  // namespace tlmc::ir
