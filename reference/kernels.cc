#include "reference/kernels.h"

#include <cstring>

#include "ir/shape_rules.h"

namespace tlmc::reference {

namespace {

const KernelTable& table() {
  static const KernelTable t = [] {
    KernelTable k;
    add_nn_kernels(k);
    add_elementwise_kernels(k);
    add_tensor_kernels(k);
    add_shape_kernels(k);
    return k;
  }();
  return t;
}

}  // namespace

bool has_kernel(const std::string& op) { return table().count(op) != 0; }

namespace {

// t, of ONNX shape [N, C, s...], moved to layout l (to_layout), or back.
HostTensor move_channels(const HostTensor& t, ir::ChannelLayout l, bool to_layout) {
  const ir::Shape cf = to_layout ? t.type.shape : ir::channels_first_shape(t.type.shape, l);
  HostTensor out{{t.type.dtype, to_layout ? ir::layout_shape(cf, l) : cf}, {}};
  out.bytes = ir::move_channels(t.bytes, cf, ir::dtype_size(t.type.dtype), l, to_layout);
  return out;
}

}  // namespace

std::vector<HostTensor> run_kernel(const ir::Graph& g, const ir::Node& n, const KernelInputs& in) {
  auto it = table().find(n.op);
  TLMC_ASSERT(it != table().end(), "the reference interpreter has no kernel for " << n.op);
  // A channels-last or blocked node (tlmc's attributes) runs the ONNX kernel on its input
  // moved to channels-first, and moves the result back: the geometry reads the attributes
  // itself.
  if (const ir::ChannelLayout layout = ir::channel_layout(n); !layout.channels_first()) {
    TLMC_ASSERT(it->second.one_output && n.outputs.size() == 1,
                n.describe() << " is channels-last or blocked with several outputs");
    const HostTensor x = move_channels(*in.at(0), layout, false);
    KernelInputs moved = in;
    moved[0] = &x;
    const ir::TensorType& y = g.type(n.outputs[0]);
    HostTensor out = HostTensor::zeros({y.dtype, ir::channels_first_shape(y.shape, layout)});
    it->second.one_output(g, n, moved, out);
    return {move_channels(out, layout, true)};
  }
  std::vector<HostTensor> out;
  for (int id : n.outputs) out.push_back(id < 0 ? HostTensor{} : HostTensor::zeros(g.type(id)));
  if (it->second.all_outputs) {
    it->second.all_outputs(g, n, in, out);
    return out;
  }
  TLMC_ASSERT(it->second.one_output && !out.empty(), n.describe() << " has no kernel to run");
  it->second.one_output(g, n, in, out[0]);
  return out;
}

FloatOperand::FloatOperand(const HostTensor& t) : data_(t.f32()) {
  if (!ir::dtype_is_half(t.type.dtype)) return;
  const auto* h = reinterpret_cast<const uint16_t*>(t.bytes.data());
  converted_.resize(static_cast<size_t>(t.type.numel()));
  for (size_t i = 0; i < converted_.size(); ++i)
    converted_[i] = ir::sixteen_bit_to_float(t.type.dtype, h[i]);
  data_ = converted_.data();
}

void store_element(ir::DType t, double v, uint8_t* p) {
  if (ir::dtype_is_half(t)) {
    const float f = static_cast<float>(v);
    const uint16_t h = t == ir::DType::BFloat16 ? ir::float_to_bfloat16(f) : ir::float_to_half(f);
    std::memcpy(p, &h, 2);
    return;
  }
  with_element_type(t, [&](auto zero) {
    using T = decltype(zero);
    const T e = t == ir::DType::Bool ? T(v != 0 ? 1 : 0) : static_cast<T>(v);
    std::memcpy(p, &e, sizeof e);
  });
}

std::vector<int64_t> row_major_strides(const ir::Shape& s) {
  std::vector<int64_t> strides(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) strides[i - 1] = strides[i] * s[i];
  return strides;
}

std::vector<int64_t> broadcast_strides(const ir::Shape& from, const ir::Shape& to) {
  TLMC_ASSERT(from.size() <= to.size(),
              "cannot broadcast " << ir::shape_str(from) << " to " << ir::shape_str(to));
  const std::vector<int64_t> own = row_major_strides(from);
  const size_t lead = to.size() - from.size();
  std::vector<int64_t> strides(to.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) {
    TLMC_ASSERT(from[i] == to[lead + i] || from[i] == 1,
                "cannot broadcast " << ir::shape_str(from) << " to " << ir::shape_str(to));
    strides[lead + i] = from[i] == 1 ? 0 : own[i];
  }
  return strides;
}

std::vector<int64_t> unravel(int64_t flat, const ir::Shape& s) {
  std::vector<int64_t> coords(s.size(), 0);
  for (size_t i = s.size(); i-- > 0;) {
    coords[i] = flat % s[i];
    flat /= s[i];
  }
  return coords;
}

int64_t offset_of(const std::vector<int64_t>& coords, const std::vector<int64_t>& strides) {
  int64_t off = 0;
  for (size_t i = 0; i < coords.size(); ++i) off += coords[i] * strides[i];
  return off;
}

}  // namespace tlmc::reference
