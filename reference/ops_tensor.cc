// Reference kernels of the data-movement operators, which copy elements of any dtype as
// bytes (views, Transpose, Concat, Gather, Expand, Slice, Split, Pad, Tile), and of the
// reductions ReduceMean and ReduceSum.
#include <algorithm>
#include <cstring>

#include "ir/shape_rules.h"
#include "reference/kernels.h"

namespace tlmc::reference {
namespace {

using ir::Shape;

// Reshape, Flatten, Identity, Squeeze and Unsqueeze: the same dense bytes under another
// shape.
void copy(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  TLMC_ASSERT(in[0]->bytes.size() == out.bytes.size(), "a view must keep the byte count");
  out.bytes = in[0]->bytes;
}

// out[c] = in[c'] with c'[perm[i]] = c[i]; perm defaults to the reversed axes.
void transpose(const ir::Graph&, const ir::Node& n, const KernelInputs& in, HostTensor& out) {
  const Shape& xs = in[0]->type.shape;
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty())
    for (size_t i = xs.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  const std::vector<int64_t> in_strides = row_major_strides(xs);
  std::vector<int64_t> strides;  // input strides in output axis order
  for (int64_t p : perm) strides.push_back(in_strides[static_cast<size_t>(p)]);
  const size_t size = ir::dtype_size(out.type.dtype);
  for (int64_t i = 0; i < out.type.numel(); ++i) {
    const int64_t from = offset_of(unravel(i, out.type.shape), strides);
    std::memcpy(out.bytes.data() + i * size, in[0]->bytes.data() + from * size, size);
  }
}

// For each index of the axes before `axis`, the inputs' blocks one after the other.
void concat(const ir::Graph&, const ir::Node& n, const KernelInputs& in, HostTensor& out) {
  const Shape& os = out.type.shape;
  const int axis = *ir::normalize_axis(n.attr_int("axis"), static_cast<int64_t>(os.size()));
  const int64_t outer = ir::shape_numel(Shape(os.begin(), os.begin() + axis));
  if (outer == 0) return;
  uint8_t* dst = out.bytes.data();
  for (int64_t o = 0; o < outer; ++o)
    for (const HostTensor* t : in) {
      const size_t block = t->bytes.size() / static_cast<size_t>(outer);
      std::memcpy(dst, t->bytes.data() + static_cast<size_t>(o) * block, block);
      dst += block;
    }
  TLMC_ASSERT(
      dst == out.bytes.data() + out.bytes.size(),
      n.describe() << " wrote " << (dst - out.bytes.data()) << " bytes of " << out.bytes.size());
}

int64_t read_index(const HostTensor& indices, int64_t i) {
  if (indices.type.dtype == ir::DType::Int64) return indices.i64()[i];
  int32_t v;
  std::memcpy(&v, indices.bytes.data() + 4 * i, 4);
  return v;
}

// out[a..., j..., b...] = data[a..., indices[j...], b...]; a negative index counts from the
// end of the axis.
void gather(const ir::Graph&, const ir::Node& n, const KernelInputs& in, HostTensor& out) {
  const Shape& ds = in[0]->type.shape;
  const int axis = *ir::normalize_axis(n.attr_int("axis"), static_cast<int64_t>(ds.size()));
  const int64_t extent = ds[static_cast<size_t>(axis)];
  const int64_t outer = ir::shape_numel(Shape(ds.begin(), ds.begin() + axis));
  const int64_t inner = ir::shape_numel(Shape(ds.begin() + axis + 1, ds.end()));
  const int64_t count = in[1]->type.numel();
  const size_t block = static_cast<size_t>(inner) * ir::dtype_size(out.type.dtype);
  for (int64_t j = 0; j < count; ++j) {
    const int64_t raw = read_index(*in[1], j);
    const int64_t index = raw < 0 ? raw + extent : raw;
    if (index < 0 || index >= extent)
      throw Diagnostic(n.loc, n.describe() + " has index " + std::to_string(raw) +
                                  " out of range for axis " + std::to_string(axis) +
                                  " of data of shape " + ir::shape_str(ds));
    for (int64_t o = 0; o < outer; ++o)
      std::memcpy(out.bytes.data() + static_cast<size_t>(o * count + j) * block,
                  in[0]->bytes.data() + static_cast<size_t>(o * extent + index) * block, block);
  }
}

// Copies the element of `from` at flat index j to the element of `to` at flat index i.
void copy_element(const HostTensor& from, int64_t j, HostTensor& to, int64_t i) {
  const size_t size = ir::dtype_size(to.type.dtype);
  std::memcpy(to.bytes.data() + static_cast<size_t>(i) * size,
              from.bytes.data() + static_cast<size_t>(j) * size, size);
}

// out[c] = in[c'] where c' is the input element output coordinates c read, by `source`
// (which may change c in place).
template <typename F>
void gather_elements(const HostTensor& in, HostTensor& out, F source) {
  const std::vector<int64_t> strides = row_major_strides(in.type.shape);
  for (int64_t i = 0; i < out.type.numel(); ++i) {
    std::vector<int64_t> c = unravel(i, out.type.shape);
    source(c);
    copy_element(in, offset_of(c, strides), out, i);
  }
}

// Expand: the input broadcast to the output's shape.
void expand(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  for_each_broadcast({in[0]->type.shape}, out.type.shape,
                     [&](int64_t i, const int64_t* at) { copy_element(*in[0], at[0], out, i); });
}

// out[c] = in[start + c * step], per dimension.
void slice(const ir::Graph& g, const ir::Node& n, const KernelInputs& in, HostTensor& out) {
  const ir::SliceGeometry s = ir::slice_geometry(g, n);
  gather_elements(*in[0], out, [&](std::vector<int64_t>& c) {
    for (size_t d = 0; d < c.size(); ++d) c[d] = s.start[d] + c[d] * s.step[d];
  });
}

// Output k holds the input's elements along the axis from the sum of the sizes before it.
void split(const ir::Graph& g, const ir::Node& n, const KernelInputs& in,
           std::vector<HostTensor>& out) {
  const ir::SplitGeometry s = ir::split_geometry(g, n);
  int64_t begin = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    const int64_t offset = begin;
    begin += s.sizes[k];
    if (n.outputs[k] < 0) continue;
    gather_elements(*in[0], out[k],
                    [&](std::vector<int64_t>& c) { c[static_cast<size_t>(s.axis)] += offset; });
  }
}

// Output position o reads input position o - pad_begin; outside the input: the constant,
// the nearest element (edge), or the mirror image without the border repeated (reflect).
void pad(const ir::Graph& g, const ir::Node& n, const KernelInputs& in, HostTensor& out) {
  const ir::PadGeometry p = ir::pad_geometry(g, n);
  const ir::Shape& xs = in[0]->type.shape;
  const std::vector<int64_t> strides = row_major_strides(xs);
  HostTensor fill = HostTensor::zeros({out.type.dtype, {}});
  store_element(out.type.dtype, p.value, fill.bytes.data());
  for (int64_t i = 0; i < out.type.numel(); ++i) {
    std::vector<int64_t> c = unravel(i, out.type.shape);
    bool inside = true;
    for (size_t d = 0; d < c.size(); ++d) {
      int64_t src = c[d] - p.begin[d];
      const int64_t last = xs[d] - 1;
      if (p.mode == ir::PadMode::Edge) src = std::min(std::max(src, int64_t{0}), last);
      if (p.mode == ir::PadMode::Reflect) src = src < 0 ? -src : src > last ? 2 * last - src : src;
      inside = inside && src >= 0 && src <= last;
      c[d] = src;
    }
    if (inside)
      copy_element(*in[0], offset_of(c, strides), out, i);
    else
      copy_element(fill, 0, out, i);
  }
}

// out[c] = in[c mod extent], per dimension.
void tile(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  const ir::Shape& xs = in[0]->type.shape;
  gather_elements(*in[0], out, [&](std::vector<int64_t>& c) {
    for (size_t d = 0; d < c.size(); ++d) c[d] %= xs[d];
  });
}

// Sums every input element into the output element whose coordinates agree outside the
// reduced axes; ReduceMean then divides by the number of elements reduced.
void reduce(const ir::Graph& g, const ir::Node& n, const KernelInputs& in, HostTensor& out) {
  const std::vector<int> axes = ir::reduce_axes(g, n);
  if (axes.empty()) {
    copy(g, n, in, out);
    return;
  }
  const Shape& xs = in[0]->type.shape;
  Shape kept = xs;  // the output shape with keepdims: same flat layout either way
  for (int a : axes) kept[static_cast<size_t>(a)] = 1;
  const std::vector<int64_t> strides = broadcast_strides(kept, xs);
  std::vector<double> sums(static_cast<size_t>(out.type.numel()), 0.0);
  for (int64_t i = 0; i < in[0]->type.numel(); ++i)
    sums[static_cast<size_t>(offset_of(unravel(i, xs), strides))] += in[0]->f32()[i];
  double count = 1;  // elements reduced into each output (0 over a zero-sized axis: a NaN mean)
  for (int a : axes) count *= static_cast<double>(xs[static_cast<size_t>(a)]);
  for (size_t i = 0; i < sums.size(); ++i)
    out.f32()[i] = static_cast<float>(n.op == "ReduceMean" ? sums[i] / count : sums[i]);
}

}  // namespace

void add_tensor_kernels(KernelTable& table) {
  table["Reshape"] = copy;
  table["Flatten"] = copy;
  table["Identity"] = copy;
  table["Squeeze"] = copy;
  table["Unsqueeze"] = copy;
  table["Expand"] = expand;
  table["Slice"] = slice;
  table["Split"] = split;
  table["Pad"] = pad;
  table["Tile"] = tile;
  table["Transpose"] = transpose;
  table["Concat"] = concat;
  table["Gather"] = gather;
  table["ReduceMean"] = reduce;
  table["ReduceSum"] = reduce;
}

}  // namespace tlmc::reference
