// The operator table: the ONNX attribute names and defaults, the partitioning classes, and a
// reference kernel for every operator.
#include <gtest/gtest.h>

#include <algorithm>

#include "ir/op_schema.h"
#include "reference/kernels.h"

namespace tlmc::test {
namespace {

const ir::AttrSpec* find_attr(const ir::OpSchema& s, const std::string& name) {
  auto it = std::find_if(s.attrs.begin(), s.attrs.end(),
                         [&](const ir::AttrSpec& a) { return a.name == name; });
  return it == s.attrs.end() ? nullptr : &*it;
}

TEST(OperatorTable, ListsTheSupportedOperatorsSorted) {
  EXPECT_EQ(ir::supported_op_list(),
            "Add, AveragePool, BatchNormalization, Clip, Concat, Conv, ConvTranspose, Div, Erf, "
            "Exp, Flatten, Gather, Gemm, GlobalAveragePool, Identity, LayerNormalization, "
            "LeakyRelu, MatMul, MaxPool, Mul, Pow, ReduceMean, ReduceSum, Relu, Reshape, "
            "Sigmoid, Softmax, Sqrt, Sub, Tanh, Transpose");
  EXPECT_EQ(ir::find_op("Resize"), nullptr);
}

TEST(OperatorTable, EveryOperatorHasAReferenceKernel) {
  for (const ir::OpSchema* s : ir::all_ops()) {
    EXPECT_NE(reference::find_kernel(s->name), nullptr) << s->name;
    EXPECT_NE(s->infer, nullptr) << s->name;
  }
}

TEST(OperatorTable, ClassesForPartitioning) {
  using ir::OpClass;
  const std::map<std::string, OpClass> expected = {{"MatMul", OpClass::Anchor},
                                                   {"Gemm", OpClass::Anchor},
                                                   {"Conv", OpClass::Anchor},
                                                   {"ConvTranspose", OpClass::Anchor},
                                                   {"MaxPool", OpClass::Anchor},
                                                   {"AveragePool", OpClass::Anchor},
                                                   {"GlobalAveragePool", OpClass::Anchor},
                                                   {"ReduceMean", OpClass::Anchor},
                                                   {"ReduceSum", OpClass::Anchor},
                                                   {"Softmax", OpClass::Anchor},
                                                   {"LayerNormalization", OpClass::Anchor},
                                                   {"Transpose", OpClass::Injective},
                                                   {"Concat", OpClass::Injective},
                                                   {"Gather", OpClass::Injective},
                                                   {"Reshape", OpClass::View},
                                                   {"Flatten", OpClass::View},
                                                   {"Identity", OpClass::View},
                                                   {"BatchNormalization", OpClass::Elementwise},
                                                   {"Relu", OpClass::Elementwise},
                                                   {"Add", OpClass::Elementwise},
                                                   {"Clip", OpClass::Elementwise}};
  for (const auto& [op, cls] : expected) EXPECT_EQ(ir::find_op(op)->op_class, cls) << op;
}

// Operators whose newest definition is later than 13 (Relu-14, Add-14, Reshape-14,
// BatchNormalization-15, Identity-16, LeakyRelu-16, Pow-15) mean the same for float32 in
// the older opsets, so opset-13 models that use them verify.
TEST(OperatorTable, OlderOpsetsWithTheSameSemanticsAreAccepted) {
  for (const ir::OpSchema* s : ir::all_ops()) {
    if (s->name == "LayerNormalization") continue;
    EXPECT_LE(s->since_opset, ir::kMinOpset) << s->name;
  }
  EXPECT_EQ(ir::find_op("LayerNormalization")->since_opset, 17);
}

TEST(OperatorTable, OnnxAttributeDefaults) {
  const ir::OpSchema& conv = *ir::find_op("Conv");
  EXPECT_EQ(std::get<std::string>(find_attr(conv, "auto_pad")->default_value), "NOTSET");
  EXPECT_EQ(std::get<int64_t>(find_attr(conv, "group")->default_value), 1);
  EXPECT_TRUE(std::get<std::vector<int64_t>>(find_attr(conv, "strides")->default_value).empty());
  EXPECT_TRUE(find_attr(*ir::find_op("MaxPool"), "kernel_shape")->required);
  EXPECT_TRUE(find_attr(*ir::find_op("Concat"), "axis")->required);
  EXPECT_EQ(find_attr(*ir::find_op("AveragePool"), "dilations"), nullptr);  // opset 19
  EXPECT_DOUBLE_EQ(std::get<double>(find_attr(*ir::find_op("LeakyRelu"), "alpha")->default_value),
                   0.01);
  EXPECT_DOUBLE_EQ(
      std::get<double>(find_attr(*ir::find_op("LayerNormalization"), "epsilon")->default_value),
      1e-5);
  EXPECT_EQ(std::get<int64_t>(find_attr(*ir::find_op("Softmax"), "axis")->default_value), -1);
  EXPECT_EQ(std::get<int64_t>(find_attr(*ir::find_op("Flatten"), "axis")->default_value), 1);
  EXPECT_NE(find_attr(*ir::find_op("ReduceMean"), "axes"), nullptr);  // attribute at 13
  EXPECT_EQ(find_attr(*ir::find_op("ReduceSum"), "axes"), nullptr);   // input since 13
  EXPECT_EQ(ir::find_op("ReduceSum")->max_inputs, 2);
  EXPECT_EQ(ir::find_op("Clip")->max_inputs, 3);
  EXPECT_TRUE(ir::find_op("Clip")->attrs.empty());
}

}  // namespace
}  // namespace tlmc::test
