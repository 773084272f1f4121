// The operator table: the ONNX attribute names and defaults, the partitioning classes, and
// for every operator a shape inference, a lowering and a reference kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "ir/lower_builder.h"
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
            "Abs, Add, And, AveragePool, BatchNormalization, Cast, Clip, Concat, ConstantOfShape, "
            "Conv, ConvTranspose, Div, Equal, Erf, Exp, Expand, Flatten, Floor, Gather, Gemm, "
            "GlobalAveragePool, Greater, GreaterOrEqual, HardSigmoid, HardSwish, Identity, "
            "LayerNormalization, LeakyRelu, Less, LessOrEqual, Log, MatMul, Max, MaxPool, Min, "
            "Mul, Neg, Not, Or, Pad, Pow, Range, Reciprocal, ReduceMean, ReduceSum, Relu, "
            "Reshape, Shape, Sigmoid, Slice, Softmax, Split, Sqrt, Squeeze, Sub, Tanh, Tile, "
            "Transpose, Unsqueeze, Where");
  EXPECT_EQ(ir::find_op("Resize"), nullptr);
}

// Each operator is in all three places: the table (shape inference), the lowering to tensor
// expressions and the reference interpreter.
TEST(OperatorTable, EveryOperatorIsComplete) {
  for (const ir::OpSchema* s : ir::all_ops()) {
    EXPECT_NE(s->infer, nullptr) << s->name;
    EXPECT_NE(ir::find_lowering(s->name), nullptr) << s->name;
    EXPECT_TRUE(reference::has_kernel(s->name)) << s->name;
  }
  EXPECT_EQ(ir::find_lowering("Resize"), nullptr);
  EXPECT_FALSE(reference::has_kernel("Resize"));
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
                                                   {"Slice", OpClass::Injective},
                                                   {"Split", OpClass::Injective},
                                                   {"Pad", OpClass::Injective},
                                                   {"Expand", OpClass::Injective},
                                                   {"Shape", OpClass::Injective},
                                                   {"Reshape", OpClass::View},
                                                   {"Squeeze", OpClass::View},
                                                   {"Unsqueeze", OpClass::View},
                                                   {"Where", OpClass::Elementwise},
                                                   {"Cast", OpClass::Elementwise},
                                                   {"Equal", OpClass::Elementwise},
                                                   {"Max", OpClass::Elementwise},
                                                   {"Flatten", OpClass::View},
                                                   {"Identity", OpClass::View},
                                                   {"BatchNormalization", OpClass::Elementwise},
                                                   {"Relu", OpClass::Elementwise},
                                                   {"Add", OpClass::Elementwise},
                                                   {"Clip", OpClass::Elementwise}};
  for (const auto& [op, cls] : expected) EXPECT_EQ(ir::find_op(op)->op_class, cls) << op;
}

// Operators whose newest definition is later than 13 (Relu-14, Add-14, Reshape-14,
// BatchNormalization-15, Identity-16, LeakyRelu-16, Pow-15, Shape-15, Where-16) mean the
// same for the dtypes tlmc supports in the older opsets, so opset-13 models that use them
// verify. LayerNormalization and HardSwish do not exist before 17 and 14.
TEST(OperatorTable, OlderOpsetsWithTheSameSemanticsAreAccepted) {
  for (const ir::OpSchema* s : ir::all_ops()) {
    if (s->name == "LayerNormalization" || s->name == "HardSwish") continue;
    EXPECT_LE(s->since_opset, ir::kMinOpset) << s->name;
  }
  EXPECT_EQ(ir::find_op("LayerNormalization")->since_opset, 17);
  EXPECT_EQ(ir::find_op("HardSwish")->since_opset, 14);
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

// Opset 13 to 17 moved attributes to inputs: Squeeze, Unsqueeze (axes), Split (split), Slice
// (starts, ends, axes, steps), Pad (pads, constant_value); and Shape-15 took start and end.
TEST(OperatorTable, OnnxInputsAndAttributesOfTheShapeOperators) {
  EXPECT_TRUE(ir::find_op("Unsqueeze")->attrs.empty());
  EXPECT_EQ(ir::find_op("Unsqueeze")->min_inputs, 2);
  EXPECT_TRUE(ir::find_op("Squeeze")->attrs.empty());
  EXPECT_EQ(ir::find_op("Squeeze")->max_inputs, 2);
  EXPECT_EQ(ir::find_op("Slice")->min_inputs, 3);
  EXPECT_EQ(ir::find_op("Slice")->max_inputs, 5);
  const ir::OpSchema& split = *ir::find_op("Split");
  EXPECT_EQ(std::get<int64_t>(find_attr(split, "axis")->default_value), 0);
  EXPECT_EQ(split.max_inputs, 2);
  EXPECT_GT(split.max_outputs, 100);
  EXPECT_EQ(std::get<std::string>(find_attr(*ir::find_op("Pad"), "mode")->default_value),
            "constant");
  EXPECT_EQ(ir::find_op("Pad")->max_inputs, 3);
  EXPECT_EQ(std::get<int64_t>(find_attr(*ir::find_op("Shape"), "start")->default_value), 0);
  EXPECT_TRUE(find_attr(*ir::find_op("Cast"), "to")->required);
  // ONNX's TENSOR attribute `value` as a number and a dtype name.
  const ir::OpSchema& cos = *ir::find_op("ConstantOfShape");
  EXPECT_DOUBLE_EQ(std::get<double>(find_attr(cos, "value")->default_value), 0.0);
  EXPECT_EQ(std::get<std::string>(find_attr(cos, "dtype")->default_value), "float32");
  EXPECT_DOUBLE_EQ(std::get<double>(find_attr(*ir::find_op("HardSigmoid"), "alpha")->default_value),
                   0.2);
  EXPECT_EQ(ir::find_op("Max")->max_inputs, std::numeric_limits<int>::max());
  EXPECT_EQ(ir::find_op("Where")->min_inputs, 3);
}

}  // namespace
}  // namespace tlmc::test
