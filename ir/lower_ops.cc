#include "ir/lower_ops.h"

#include <map>

namespace tlmc::ir {

LowerFn find_lowering(const std::string& op) {
  static const std::map<std::string, LowerFn> table = {
      {"Relu", lower_unary},
      {"LeakyRelu", lower_unary},
      {"Clip", lower_unary},
      {"Sigmoid", lower_unary},
      {"Tanh", lower_unary},
      {"Erf", lower_unary},
      {"Exp", lower_unary},
      {"Sqrt", lower_unary},
      {"Log", lower_unary},
      {"Reciprocal", lower_unary},
      {"Floor", lower_unary},
      {"Neg", lower_unary},
      {"Abs", lower_unary},
      {"Not", lower_unary},
      {"HardSigmoid", lower_unary},
      {"HardSwish", lower_unary},
      {"Cast", lower_unary},
      {"Add", lower_binary},
      {"Sub", lower_binary},
      {"Mul", lower_binary},
      {"Div", lower_binary},
      {"Pow", lower_binary},
      {"Equal", lower_binary},
      {"Less", lower_binary},
      {"Greater", lower_binary},
      {"LessOrEqual", lower_binary},
      {"GreaterOrEqual", lower_binary},
      {"And", lower_binary},
      {"Or", lower_binary},
      {"Max", lower_variadic},
      {"Min", lower_variadic},
      {"Where", lower_where},
      {"BatchNormalization", lower_batch_norm},
      {"Reshape", lower_view},
      {"Flatten", lower_view},
      {"Identity", lower_view},
      {"Squeeze", lower_view},
      {"Unsqueeze", lower_view},
      {"Transpose", lower_transpose},
      {"Concat", lower_concat},
      {"Gather", lower_gather},
      {"Shape", lower_shape},
      {"ConstantOfShape", lower_constant_of_shape},
      {"Range", lower_range},
      {"Expand", lower_expand},
      {"Slice", lower_slice},
      {"Split", lower_split},
      {"Pad", lower_pad},
      {"Tile", lower_tile},
      {"Conv", lower_conv},
      {"ConvTranspose", lower_conv_transpose},
      {"MaxPool", lower_pool},
      {"AveragePool", lower_pool},
      {"GlobalAveragePool", lower_global_average_pool},
      {"MatMul", lower_matmul},
      {"Gemm", lower_gemm},
      {"Softmax", lower_softmax},
      {"LayerNormalization", lower_layer_norm},
      {"ReduceMean", lower_reduce},
      {"ReduceSum", lower_reduce},
  };
  auto it = table.find(op);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace tlmc::ir
