// The reference interpreter's kernels: one per operator of the table (ir/op_schema.h),
// split by family over reference/ops_{nn,elementwise,tensor}.cc, and the row-major index
// arithmetic they share. Each kernel writes output 0 of a verified node.
#pragma once

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

// nullptr when the interpreter has no kernel for the operator.
Kernel find_kernel(const std::string& op);

using KernelTable = std::map<std::string, Kernel>;
void add_nn_kernels(KernelTable& table);           // reference/ops_nn.cc
void add_elementwise_kernels(KernelTable& table);  // reference/ops_elementwise.cc
void add_tensor_kernels(KernelTable& table);       // reference/ops_tensor.cc

// Element strides of a dense row-major tensor of shape s.
std::vector<int64_t> row_major_strides(const ir::Shape& s);
// The strides at which an operand of shape `from` is read at the coordinates of shape `to`
// under numpy broadcasting (aligned at the right; 0 along broadcast dimensions).
std::vector<int64_t> broadcast_strides(const ir::Shape& from, const ir::Shape& to);
// The coordinates of row-major flat index `flat` in shape s.
std::vector<int64_t> unravel(int64_t flat, const ir::Shape& s);
// The flat offset of coordinates under the given strides.
int64_t offset_of(const std::vector<int64_t>& coords, const std::vector<int64_t>& strides);

}  // namespace tlmc::reference
