// Shape inference rejects shapes, dtypes and attributes that do not fit an operator, with a
// message naming the node and the offending shapes.
#include <gtest/gtest.h>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

std::string one_node_error(const std::vector<std::pair<std::string, ir::Shape>>& inputs,
                           const std::string& op, std::map<std::string, ir::AttrValue> attrs = {},
                           const std::string& name = "n") {
  GraphBuilder b;
  std::vector<std::string> names;
  for (const auto& [in, shape] : inputs) {
    b.input(in, shape);
    names.push_back(in);
  }
  b.node(op, names, {"y"}, attrs, name);
  b.output("y");
  return b.build_error();
}

TEST(ShapeErrors, MatMulInnerDimensionsDiffer) {
  EXPECT_EQ(one_node_error({{"a", {2, 3}}, {"b", {4, 5}}}, "MatMul", {}, "mm"),
            "MatMul 'mm' cannot multiply [2, 3] by [4, 5]: inner dimensions 3 and 4 differ");
  EXPECT_EQ(one_node_error({{"a", {2, 2, 3}}, {"b", {3, 3, 1}}}, "MatMul"),
            "MatMul 'n' cannot multiply [2, 2, 3] by [3, 3, 1]: batch dimensions [2] and [3] do "
            "not broadcast");
}

TEST(ShapeErrors, FloatOperatorsNeedFloat32) {
  GraphBuilder b;
  b.input("x", {2}, ir::DType::Int64);
  b.node("Relu", {"x"}, {"y"}, {}, "r");
  b.output("y");
  EXPECT_EQ(b.build_error(), "Relu 'r' does not support input dtype int64 (supported: float32)");
}

TEST(ShapeErrors, BinaryOperandsMustBroadcast) {
  EXPECT_EQ(one_node_error({{"a", {2, 3}}, {"b", {2}}}, "Add"),
            "Add 'n' cannot broadcast [2, 3] with [2]");
}

TEST(ShapeErrors, GemmShapes) {
  EXPECT_EQ(one_node_error({{"a", {2, 3}}, {"b", {2, 3}}}, "Gemm"),
            "Gemm 'n' cannot multiply A [2, 3] (transA 0) by B [2, 3] (transB 0): inner "
            "dimensions 3 and 2 differ");
  EXPECT_EQ(one_node_error({{"a", {2, 3}}, {"b", {3, 4}}, {"c", {2, 1, 1}}}, "Gemm"),
            "Gemm 'n' input C of shape [2, 1, 1] does not broadcast to the output shape [2, 4]");
  EXPECT_EQ(one_node_error({{"a", {3}}, {"b", {3, 4}}}, "Gemm"),
            "Gemm 'n' input A must be 2-D, got [3]");
}

TEST(ShapeErrors, ConvShapes) {
  GraphBuilder b;
  b.input("x", {1, 3, 8, 8});
  b.weight("w", {4, 2, 3, 3}, std::vector<float>(72, 0));
  b.node("Conv", {"x", "w"}, {"y"}, {}, "c");
  b.output("y");
  EXPECT_EQ(b.build_error(),
            "Conv 'c' weight W of shape [4, 2, 3, 3] does not fit input X of shape [1, 3, 8, 8] "
            "with group 1: W.shape[1] * group must equal the 3 input channels");
  EXPECT_EQ(one_node_error({{"x", {3, 8}}, {"w", {4, 3}}}, "Conv"),
            "Conv 'n' input X must have rank 3, 4 or 5 (N, C and 1 to 3 spatial axes), got [3, 8]");
  EXPECT_EQ(one_node_error({{"x", {1, 3, 8, 8}}, {"w", {4, 3, 3}}}, "Conv"),
            "Conv 'n' weight W of shape [4, 3, 3] must have rank 4 (output channels, input "
            "channels per group and one per spatial axis of input X [1, 3, 8, 8])");
  EXPECT_EQ(one_node_error({{"x", {1, 3, 2, 2}}, {"w", {4, 3, 3, 3}}}, "Conv"),
            "Conv 'n' window of extent 3 (kernel [3, 3], dilations [1, 1]) does not fit spatial "
            "axis 0 of extent 2 with pads 0 and 0");
  EXPECT_EQ(one_node_error({{"x", {1, 3, 8, 8}}, {"w", {4, 3, 3, 3}}}, "Conv",
                           {{"strides", attr_ints({2, 2, 2})}}),
            "Conv 'n' has strides [2, 2, 2] of length 3, expected 2 (one per spatial axis of input "
            "[1, 3, 8, 8])");
  EXPECT_EQ(
      one_node_error({{"x", {1, 3, 8, 8}}, {"w", {4, 3, 3, 3}}}, "Conv",
                     {{"pads", attr_ints({1, 1, 1, 1})}, {"auto_pad", attr_string("VALID")}}),
      "Conv 'n' has both pads [1, 1, 1, 1] and auto_pad 'VALID'; ONNX allows only one of them");
  EXPECT_EQ(one_node_error({{"x", {1, 3, 8, 8}}, {"w", {4, 3, 3, 3}}}, "Conv",
                           {{"auto_pad", attr_string("SAME")}}),
            "Conv 'n' has auto_pad 'SAME' (expected NOTSET, SAME_UPPER, SAME_LOWER or VALID)");
  EXPECT_EQ(one_node_error({{"x", {1, 3, 8, 8}}, {"w", {4, 3, 3, 3}}, {"b", {3}}}, "Conv"),
            "Conv 'n' bias B of shape [3] must have shape [4] (one per output channel)");
}

TEST(ShapeErrors, PoolsSupportOnlyTheirFirstOutput) {
  GraphBuilder b;
  b.input("x", {1, 1, 4, 4});
  b.node("MaxPool", {"x"}, {"y", "idx"}, {{"kernel_shape", attr_ints({2, 2})}}, "p");
  b.output("y");
  EXPECT_EQ(b.build_error(),
            "MaxPool 'p' requests output 1 'idx'; tlmc supports only the first output of MaxPool");
}

TEST(ShapeErrors, BatchNormalizationIsInferenceOnly) {
  GraphBuilder b;
  b.input("x", {1, 2, 3, 3});
  for (const char* w : {"s", "b", "m", "v"}) b.weight(w, {2}, {1, 1});
  b.node("BatchNormalization", {"x", "s", "b", "m", "v"}, {"y"}, {{"training_mode", attr_int(1)}},
         "bn");
  b.output("y");
  EXPECT_EQ(b.build_error(),
            "BatchNormalization 'bn' has training_mode 1; tlmc supports only inference "
            "(training_mode 0)");
}

TEST(ShapeErrors, ClipBoundsMustBeScalarWeights) {
  GraphBuilder b;
  b.input("x", {4});
  b.input("lo", {});
  b.node("Clip", {"x", "lo"}, {"y"}, {}, "clip");
  b.output("y");
  EXPECT_EQ(b.build_error(), "Clip 'clip' needs its min 'lo' to be a constant weight");
  GraphBuilder c;
  c.input("x", {4});
  c.weight("hi", {2}, {1, 2});
  c.node("Clip", {"x", "", "hi"}, {"y"}, {}, "clip");
  c.output("y");
  EXPECT_EQ(c.build_error(), "Clip 'clip' needs its max 'hi' to be a scalar, got shape [2]");
}

std::string reshape_error(ir::Shape in, const std::vector<int64_t>& shape,
                          ir::DType dtype = ir::DType::Int64) {
  GraphBuilder b;
  b.input("x", std::move(in));
  if (dtype == ir::DType::Int64) {
    b.weight_i64("s", {static_cast<int64_t>(shape.size())}, shape);
  } else {
    b.weight_i32("s", {static_cast<int64_t>(shape.size())},
                 std::vector<int32_t>(shape.begin(), shape.end()));
  }
  b.node("Reshape", {"x", "s"}, {"y"}, {}, "r");
  b.output("y");
  return b.build_error();
}

TEST(ShapeErrors, ReshapeShapes) {
  EXPECT_EQ(reshape_error({2, 3}, {4, 2}),
            "Reshape 'r' cannot reshape input of shape [2, 3] (6 elements) to [4, 2] (8 elements)");
  EXPECT_EQ(reshape_error({2, 3}, {-1, 4}),
            "Reshape 'r' cannot reshape input of shape [2, 3] (6 elements) to [-1, 4]");
  EXPECT_EQ(reshape_error({2, 3}, {-1, -1}),
            "Reshape 'r' has more than one -1 in its shape [-1, -1]");
  EXPECT_EQ(reshape_error({2, 3}, {6}, ir::DType::Int32),
            "Reshape 'r' does not support shape dtype int32 (supported: int64)");
  EXPECT_EQ(reshape_error({6}, {0, 0}),
            "Reshape 'r' cannot copy dimension 1 (0 in shape [0, 0]) from input of shape [6]");
}

TEST(ShapeErrors, ConcatInputsMustAgreeOutsideTheAxis) {
  EXPECT_EQ(
      one_node_error({{"a", {2, 3}}, {"b", {3, 3}}}, "Concat", {{"axis", attr_int(1)}}, "cat"),
      "Concat 'cat' input 1 of shape [3, 3] does not match input 0 of shape [2, 3] outside "
      "axis 1");
  EXPECT_EQ(one_node_error({{"a", {2, 3}}}, "Concat", {{"axis", attr_int(2)}}, "cat"),
            "Concat 'cat' has axis 2 out of range for input 0 of shape [2, 3]");
  GraphBuilder b;
  b.input("a", {2});
  b.input("b", {2}, ir::DType::Int64);
  b.node("Concat", {"a", "b"}, {"y"}, {{"axis", attr_int(0)}}, "cat");
  b.output("y");
  EXPECT_EQ(b.build_error(), "Concat 'cat' input 1 has dtype int64 but input 0 has dtype float32");
}

TEST(ShapeErrors, GatherIndices) {
  GraphBuilder b;
  b.input("data", {3, 2});
  b.input("i", {2});
  b.node("Gather", {"data", "i"}, {"y"}, {}, "g");
  b.output("y");
  EXPECT_EQ(b.build_error(),
            "Gather 'g' does not support indices dtype float32 (supported: int32, int64)");
  GraphBuilder c;
  c.input("data", {3, 2});
  c.weight_i64("i", {2}, {0, 3});
  c.node("Gather", {"data", "i"}, {"y"}, {}, "g");
  c.output("y");
  EXPECT_EQ(c.build_error(),
            "Gather 'g' has index 3 out of range for axis 0 of data of shape [3, 2]");
}

TEST(ShapeErrors, AxesOutOfRange) {
  EXPECT_EQ(one_node_error({{"x", {2, 3}}}, "Softmax", {{"axis", attr_int(2)}}),
            "Softmax 'n' has axis 2 out of range for input of shape [2, 3]");
  EXPECT_EQ(one_node_error({{"x", {2, 3}}}, "Transpose", {{"perm", attr_ints({0, 0})}}),
            "Transpose 'n' has perm [0, 0] that is not a permutation of the 2 axes of input of "
            "shape [2, 3]");
  EXPECT_EQ(one_node_error({{"x", {2, 3}}}, "ReduceMean", {{"axes", attr_ints({1, -1})}}),
            "ReduceMean 'n' has axes [1, -1] naming axis 1 twice");
  EXPECT_EQ(one_node_error({{"x", {2, 3}}}, "Flatten", {{"axis", attr_int(3)}}),
            "Flatten 'n' has axis 3 out of range for input of shape [2, 3] (expected -2 to 2)");
}

TEST(ShapeErrors, ReduceSumAxesMustBeAConstant) {
  GraphBuilder b;
  b.input("x", {2, 3});
  b.input("axes", {1}, ir::DType::Int64);
  b.node("ReduceSum", {"x", "axes"}, {"y"}, {}, "sum");
  b.output("y");
  EXPECT_EQ(b.build_error(), "ReduceSum 'sum' needs its axes 'axes' to be a constant weight");
}

}  // namespace
}  // namespace tlmc::test
