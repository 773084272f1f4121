// Reference kernels of the element-wise operators: activations, Clip, and the binary
// arithmetic operators with numpy broadcasting.
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/kernels.h"

namespace tlmc::reference {
namespace {

template <float (*F)(float)>
void unary(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  for (int64_t i = 0; i < out.type.numel(); ++i) out.f32()[i] = F(in[0]->f32()[i]);
}

float relu(float x) { return x > 0 ? x : 0.0f; }
float sigmoid(float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-double(x)))); }
float tanh_of(float x) { return std::tanh(x); }
float erf_of(float x) { return std::erf(x); }
float exp_of(float x) { return std::exp(x); }
float sqrt_of(float x) { return std::sqrt(x); }

void leaky_relu(const ir::Graph&, const ir::Node& n, const KernelInputs& in, HostTensor& out) {
  const float alpha = static_cast<float>(n.attr_float("alpha"));
  for (int64_t i = 0; i < out.type.numel(); ++i) {
    const float x = in[0]->f32()[i];
    out.f32()[i] = x >= 0 ? x : alpha * x;
  }
}

// y = min(max(x, min), max); an absent bound is the float range's end. With min > max every
// element becomes max, as ONNX specifies.
void clip(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  const float lo = in.size() > 1 && in[1] ? in[1]->f32()[0] : std::numeric_limits<float>::lowest();
  const float hi = in.size() > 2 && in[2] ? in[2]->f32()[0] : std::numeric_limits<float>::max();
  for (int64_t i = 0; i < out.type.numel(); ++i)
    out.f32()[i] = std::min(std::max(in[0]->f32()[i], lo), hi);
}

template <float (*F)(float, float)>
void binary(const ir::Graph&, const ir::Node&, const KernelInputs& in, HostTensor& out) {
  const std::vector<int64_t> a_strides = broadcast_strides(in[0]->type.shape, out.type.shape);
  const std::vector<int64_t> b_strides = broadcast_strides(in[1]->type.shape, out.type.shape);
  for (int64_t i = 0; i < out.type.numel(); ++i) {
    const std::vector<int64_t> coords = unravel(i, out.type.shape);
    out.f32()[i] =
        F(in[0]->f32()[offset_of(coords, a_strides)], in[1]->f32()[offset_of(coords, b_strides)]);
  }
}

float plus(float a, float b) { return a + b; }
float minus(float a, float b) { return a - b; }
float times(float a, float b) { return a * b; }
float divide(float a, float b) { return a / b; }
float pow_of(float a, float b) { return std::pow(a, b); }

}  // namespace

void add_elementwise_kernels(KernelTable& table) {
  table["Relu"] = unary<relu>;
  table["LeakyRelu"] = leaky_relu;
  table["Clip"] = clip;
  table["Sigmoid"] = unary<sigmoid>;
  table["Tanh"] = unary<tanh_of>;
  table["Erf"] = unary<erf_of>;
  table["Exp"] = unary<exp_of>;
  table["Sqrt"] = unary<sqrt_of>;
  table["Pow"] = binary<pow_of>;
  table["Add"] = binary<plus>;
  table["Sub"] = binary<minus>;
  table["Mul"] = binary<times>;
  table["Div"] = binary<divide>;
}

}  // namespace tlmc::reference
