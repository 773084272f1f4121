// The reference interpreter's kernels, one per operator of the table (ir/op_schema.h) in
// reference/ops_{nn,elementwise,tensor,shape}.cc, and the index arithmetic and element
// types they share. A kernel writes output 0 of a verified node, or all outputs (Split).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reference/interpreter.h"

namespace tlmc::reference {

// A node's input values in node order; nullptr for an absent optional input.
using KernelInputs = std::vector<const HostTensor*>;
// Fills `out`, already sized to the node's output 0 and zeroed.
using Kernel = void (*)(const ir::Graph& g, const ir::Node& n, const KernelInputs& in,
                        HostTensor& out);
// Fills `out`, one tensor per node output, each sized to its output and zeroed (an omitted
// output, id -1, gets an empty tensor the kernel leaves alone).
using MultiOutputKernel = void (*)(const ir::Graph& g, const ir::Node& n, const KernelInputs& in,
                                   std::vector<HostTensor>& out);

// An operator's kernel, of either kind (the table is written `table["Relu"] = relu;`).
struct OpKernel {
  OpKernel() = default;
  OpKernel(Kernel k) : one_output(k) {}              // NOLINT(google-explicit-constructor)
  OpKernel(MultiOutputKernel k) : all_outputs(k) {}  // NOLINT(google-explicit-constructor)
  Kernel one_output = nullptr;
  MultiOutputKernel all_outputs = nullptr;
};

bool has_kernel(const std::string& op);
// Evaluates node n on its input values: one value per node output, in order (an omitted
// output's is empty). Throws InternalError when the operator has no kernel.
std::vector<HostTensor> run_kernel(const ir::Graph& g, const ir::Node& n, const KernelInputs& in);

using KernelTable = std::map<std::string, OpKernel>;
void add_nn_kernels(KernelTable& table);           // reference/ops_nn.cc
void add_elementwise_kernels(KernelTable& table);  // reference/ops_elementwise.cc
void add_tensor_kernels(KernelTable& table);       // reference/ops_tensor.cc
void add_shape_kernels(KernelTable& table);        // reference/ops_shape.cc

// Calls f(T{}) with T the C++ type of an element of dtype t: float, double, int32_t, int64_t,
// int8_t, or uint8_t (uint8 and bool). Shape inference keeps float16 and bfloat16 from kernels.
template <typename F>
void with_element_type(ir::DType t, F&& f) {
  switch (t) {
    case ir::DType::Float32:
      f(float{});
      return;
    case ir::DType::Float64:
      f(double{});
      return;
    case ir::DType::Int32:
      f(int32_t{});
      return;
    case ir::DType::Int64:
      f(int64_t{});
      return;
    case ir::DType::Int8:
      f(int8_t{});
      return;
    case ir::DType::UInt8:
    case ir::DType::Bool:
      f(uint8_t{});
      return;
    case ir::DType::Float16:
    case ir::DType::BFloat16:
      break;
  }
  TLMC_ASSERT(false, "no reference arithmetic on " << ir::dtype_name(t));
}

// The elements of a product's operand as float32: the tensor's own for float32, converted
// exactly for float16 and bfloat16 (which tlmc's products read and accumulate in float32).
class FloatOperand {
 public:
  explicit FloatOperand(const HostTensor& t);
  const float* data() const { return data_; }

 private:
  std::vector<float> converted_;
  const float* data_;
};

// Writes v as one element of dtype t at p: rounded toward zero for integers, non-zero as 1
// for bool; rounded to nearest even for float16 and bfloat16.
void store_element(ir::DType t, double v, uint8_t* p);

// Element strides of a dense row-major tensor of shape s.
std::vector<int64_t> row_major_strides(const ir::Shape& s);
// The strides at which an operand of shape `from` is read at the coordinates of shape `to`
// under numpy broadcasting (aligned at the right; 0 along broadcast dimensions).
std::vector<int64_t> broadcast_strides(const ir::Shape& from, const ir::Shape& to);
// The coordinates of row-major flat index `flat` in shape s.
std::vector<int64_t> unravel(int64_t flat, const ir::Shape& s);
// The flat offset of coordinates under the given strides.
int64_t offset_of(const std::vector<int64_t>& coords, const std::vector<int64_t>& strides);

// Calls f(i, offsets) for each element i of shape `out`, in row-major order, where offsets[k]
// is the flat index of the element that operand k (of shape operands[k]) broadcasts there.
template <typename F>
void for_each_broadcast(const std::vector<ir::Shape>& operands, const ir::Shape& out, F&& f) {
  std::vector<std::vector<int64_t>> strides;
  for (const ir::Shape& s : operands) strides.push_back(broadcast_strides(s, out));
  std::vector<int64_t> coords(out.size(), 0), offsets(operands.size(), 0);
  const int64_t count = ir::shape_numel(out);
  for (int64_t i = 0; i < count; ++i) {
    f(i, offsets.data());
    // The next coordinates, odometer style, moving every operand's offset along.
    for (size_t d = out.size(); d-- > 0;) {
      for (size_t k = 0; k < offsets.size(); ++k) offsets[k] += strides[k][d];
      if (++coords[d] < out[d]) break;
      for (size_t k = 0; k < offsets.size(); ++k) offsets[k] -= strides[k][d] * out[d];
      coords[d] = 0;
    }
  }
}

}  // namespace tlmc::reference
