#include "reference/random_inputs.h"

#include <algorithm>

#include "reference/kernels.h"

namespace tlmc::reference {

int64_t random_integer_bound(const ir::Graph& g, const std::vector<int>& nodes, int t) {
  int64_t bound = 4;
  bool first = true;
  for (int id : nodes) {
    const ir::Node& n = g.nodes[static_cast<size_t>(id)];
    if (n.op != "Gather" || n.inputs.size() < 2 || n.inputs[1] != t) continue;
    int64_t axis = n.attr_int("axis");
    const ir::Shape& s = g.type(n.inputs[0]).shape;
    if (axis < 0) axis += static_cast<int64_t>(s.size());
    const int64_t extent = s.at(static_cast<size_t>(axis));
    bound = first ? extent : std::min(bound, extent);
    first = false;
  }
  return std::max<int64_t>(bound, 1);
}

HostTensor random_tensor(const ir::TensorType& type, int64_t int_bound, std::mt19937_64& rng) {
  HostTensor h = HostTensor::zeros(type);
  const int64_t n = type.numel();
  switch (type.dtype) {
    case ir::DType::Float32: {
      std::uniform_real_distribution<float> u(-1.0F, 1.0F);
      for (int64_t i = 0; i < n; ++i) h.f32()[i] = u(rng);
      return h;
    }
    case ir::DType::Float64: {
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      for (int64_t i = 0; i < n; ++i) store_element(type.dtype, u(rng), h.bytes.data() + 8 * i);
      return h;
    }
    case ir::DType::Float16:
    case ir::DType::BFloat16: {  // the same draws, rounded to the 16-bit type
      std::uniform_real_distribution<float> u(-1.0F, 1.0F);
      for (int64_t i = 0; i < n; ++i) store_element(type.dtype, u(rng), h.bytes.data() + 2 * i);
      return h;
    }
    case ir::DType::Int32:
    case ir::DType::Int64:
    case ir::DType::Int8:
    case ir::DType::UInt8:
    case ir::DType::Bool:
      break;
  }
  const int64_t hi = type.dtype == ir::DType::Bool ? 1 : std::max<int64_t>(int_bound, 1) - 1;
  std::uniform_int_distribution<int64_t> u(0, hi);
  with_element_type(type.dtype, [&](auto zero) {
    using T = decltype(zero);
    for (int64_t i = 0; i < n; ++i) h.as<T>()[i] = static_cast<T>(u(rng));
  });
  return h;
}

std::vector<HostTensor> random_graph_inputs(const ir::Graph& g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int> nodes(g.nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i] = static_cast<int>(i);
  std::vector<HostTensor> out;
  for (int t : g.inputs)
    out.push_back(random_tensor(g.type(t), random_integer_bound(g, nodes, t), rng));
  return out;
}

}  // namespace tlmc::reference
