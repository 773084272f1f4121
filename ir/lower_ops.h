// The operator lowerings, one function per operator family (ir/lower_ops_*.cc), listed by
// name in the table of lower_ops.cc. Internal to ir/.
#pragma once

#include "ir/lower_builder.h"

namespace tlmc::ir {

void lower_unary(const Node& n, TeBuilder& b);
void lower_binary(const Node& n, TeBuilder& b);
void lower_variadic(const Node& n, TeBuilder& b);
void lower_where(const Node& n, TeBuilder& b);
void lower_batch_norm(const Node& n, TeBuilder& b);
void lower_view(const Node& n, TeBuilder& b);
void lower_transpose(const Node& n, TeBuilder& b);
void lower_concat(const Node& n, TeBuilder& b);
void lower_gather(const Node& n, TeBuilder& b);

void lower_shape(const Node& n, TeBuilder& b);
void lower_constant_of_shape(const Node& n, TeBuilder& b);
void lower_range(const Node& n, TeBuilder& b);
void lower_expand(const Node& n, TeBuilder& b);
void lower_slice(const Node& n, TeBuilder& b);
void lower_split(const Node& n, TeBuilder& b);
void lower_pad(const Node& n, TeBuilder& b);
void lower_tile(const Node& n, TeBuilder& b);

void lower_conv(const Node& n, TeBuilder& b);
void lower_conv_transpose(const Node& n, TeBuilder& b);
void lower_pool(const Node& n, TeBuilder& b);
void lower_global_average_pool(const Node& n, TeBuilder& b);
void lower_matmul(const Node& n, TeBuilder& b);
void lower_gemm(const Node& n, TeBuilder& b);
void lower_softmax(const Node& n, TeBuilder& b);
void lower_layer_norm(const Node& n, TeBuilder& b);
void lower_reduce(const Node& n, TeBuilder& b);

}  // namespace tlmc::ir
