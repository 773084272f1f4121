// The reference interpreter: naive, obviously correct evaluation of a verified graph, one
// operator at a time, in double-free plain loops. Tests and `tlmc --check` compare every
// generated kernel against it. Independent of the tensor-expression lowering on purpose.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"

namespace tlmc::reference {

struct HostTensor {
  ir::TensorType type;
  std::vector<uint8_t> bytes;  // dense row-major, type.bytes() long

  static HostTensor zeros(const ir::TensorType& t);
  float* f32() { return reinterpret_cast<float*>(bytes.data()); }
  const float* f32() const { return reinterpret_cast<const float*>(bytes.data()); }
  int64_t* i64() { return reinterpret_cast<int64_t*>(bytes.data()); }
  const int64_t* i64() const { return reinterpret_cast<const int64_t*>(bytes.data()); }
  // The elements as T, which must be the C++ type of the dtype (reference/kernels.h).
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(bytes.data());
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

// Evaluates the graph on the given inputs (in g.inputs order); returns the outputs in
// g.outputs order. Weights come from the graph.
std::vector<HostTensor> interpret(const ir::Graph& g, const std::vector<HostTensor>& inputs);

// The values of node n's outputs (one per output, an omitted one empty) when its inputs are
// weights, at compile time. A Shape node's input may be any tensor: only its type is read.
std::vector<HostTensor> evaluate_constant_node(const ir::Graph& g, const ir::Node& n);

}  // namespace tlmc::reference
