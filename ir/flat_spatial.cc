#include "ir/flat_spatial.h"

#include "ir/op_schema.h"
#include "ir/shape_rules.h"

namespace tlmc::ir {
namespace {

// A convolution that multiplies each pixel by a matrix: a 1x1 kernel, stride 1, no padding.
bool is_pointwise_conv(const Graph& g, const Node& n) {
  if (n.op != "Conv") return false;
  const SpatialGeometry geo = spatial_geometry(g, n);
  for (int i = 0; i < geo.rank(); ++i) {
    const size_t d = static_cast<size_t>(i);
    if (geo.kernel[d] != 1 || geo.strides[d] != 1 || geo.pads_begin[d] != 0 || geo.pads_end[d] != 0)
      return false;
  }
  return true;
}

// Where the spatial dimensions sit in the subgraph's full-rank tensors, and their extents.
struct Spatial {
  size_t rank = 0;   // of the convolutions' outputs
  size_t first = 0;  // the first spatial dimension: 2, or 1 when channels-last
  Shape extents;
};

// The shape s (aligned right against the full rank, as broadcasting does) with its spatial
// dimensions merged into the last; s itself when they are all 1; nullopt otherwise.
std::optional<Shape> merged_shape(const Shape& s, const Spatial& sp) {
  if (s.size() > sp.rank) return std::nullopt;
  const size_t skip = sp.rank - s.size();
  bool ones = true, full = true;
  for (size_t i = 0; i < sp.extents.size(); ++i) {
    const size_t d = sp.first + i;
    const int64_t e = d < skip ? 1 : s[d - skip];
    ones = ones && e == 1;
    full = full && d >= skip && e == sp.extents[i];
  }
  if (ones) return s;
  if (!full) return std::nullopt;
  Shape out = s;
  int64_t merged = 1;
  for (size_t i = 0; i < sp.extents.size(); ++i) {
    merged *= out[sp.first + i - skip];
    out[sp.first + i - skip] = 1;
  }
  out[sp.first + sp.extents.size() - 1 - skip] = merged;
  return out;
}

}  // namespace

std::optional<Graph> flatten_spatial(const Graph& g, const std::vector<int>& nodes) {
  std::optional<Spatial> sp;
  for (int id : nodes) {
    const Node& n = g.nodes.at(static_cast<size_t>(id));
    if (n.op == "Conv") {
      if (!is_pointwise_conv(g, n)) return std::nullopt;
      const Shape& out = g.type(n.outputs[0]).shape;
      Spatial s{out.size(), is_channels_last(n) ? size_t{1} : size_t{2}, {}};
      s.extents.assign(out.begin() + static_cast<std::ptrdiff_t>(s.first),
                       out.begin() + static_cast<std::ptrdiff_t>(s.first + out.size() - 2));
      if (sp && (sp->extents != s.extents || sp->first != s.first)) return std::nullopt;
      sp = s;
      continue;
    }
    // BatchNormalization indexes its parameters by the channel, not by broadcasting.
    const OpSchema* schema = find_op(n.op);
    if (!schema || schema->op_class != OpClass::Elementwise || n.op == "BatchNormalization")
      return std::nullopt;
  }
  if (!sp || sp->extents.size() < 2) return std::nullopt;
  int64_t leading = 1;  // nothing to merge when only the last spatial extent exceeds 1
  for (size_t i = 0; i + 1 < sp->extents.size(); ++i) leading *= sp->extents[i];
  if (leading == 1) return std::nullopt;

  Graph flat = g;
  auto merge = [&](int t) {
    if (t < 0) return true;
    std::optional<Shape> s = merged_shape(g.type(t).shape, *sp);
    if (!s) return false;
    flat.tensors[static_cast<size_t>(t)].type.shape = *s;
    return true;
  };
  for (int id : nodes) {
    const Node& n = g.nodes.at(static_cast<size_t>(id));
    // A convolution's weights and bias keep their shapes: only its activations are merged.
    const size_t operands = n.op == "Conv" ? 1 : n.inputs.size();
    for (size_t i = 0; i < operands; ++i)
      if (!merge(n.inputs[i])) return std::nullopt;
    for (int o : n.outputs)
      if (!merge(o)) return std::nullopt;
  }
  return flat;
}

}  // namespace tlmc::ir
