// Shape inference computes ONNX's output shapes: convolution and pool arithmetic with every
// padding mode, ConvTranspose's output_shape, MatMul's numpy rules, reductions.
#include <gtest/gtest.h>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

ir::Shape conv_shape(ir::Shape x, ir::Shape w, std::map<std::string, ir::AttrValue> attrs,
                     const std::string& op = "Conv") {
  GraphBuilder b;
  b.input("x", std::move(x));
  b.input("w", std::move(w));
  b.node(op, {"x", "w"}, {"y"}, attrs);
  b.output("y");
  return output_shape(b);
}

TEST(ShapeInference, ConvOutputExtents) {
  EXPECT_EQ(conv_shape({1, 3, 224, 224}, {64, 3, 7, 7},
                       {{"strides", attr_ints({2, 2})}, {"pads", attr_ints({3, 3, 3, 3})}}),
            (ir::Shape{1, 64, 112, 112}));
  EXPECT_EQ(conv_shape({1, 3, 10, 9}, {8, 3, 3, 3},
                       {{"auto_pad", attr_string("SAME_UPPER")}, {"strides", attr_ints({2, 2})}}),
            (ir::Shape{1, 8, 5, 5}));
  EXPECT_EQ(conv_shape({1, 3, 10, 9}, {8, 3, 3, 3},
                       {{"auto_pad", attr_string("VALID")}, {"strides", attr_ints({2, 2})}}),
            (ir::Shape{1, 8, 4, 4}));
  EXPECT_EQ(conv_shape({2, 4, 10, 10}, {6, 2, 3, 3},
                       {{"group", attr_int(2)}, {"dilations", attr_ints({2, 3})}}),
            (ir::Shape{2, 6, 6, 4}));
  EXPECT_EQ(conv_shape({1, 2, 9}, {4, 2, 3}, {{"strides", attr_ints({2})}}), (ir::Shape{1, 4, 4}));
  EXPECT_EQ(conv_shape({1, 2, 4, 5, 6}, {4, 2, 3, 3, 3}, {{"pads", attr_ints({1, 1, 1, 1, 1, 1})}}),
            (ir::Shape{1, 4, 4, 5, 6}));
  EXPECT_EQ(conv_shape({1, 3, 8, 8}, {4, 3, 3, 3}, {{"kernel_shape", attr_ints({3, 3})}}),
            (ir::Shape{1, 4, 6, 6}));
}

TEST(ShapeInference, ConvTransposeOutputExtents) {
  // stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1 - pads
  EXPECT_EQ(conv_shape({1, 4, 5, 5}, {4, 3, 3, 3},
                       {{"strides", attr_ints({2, 2})},
                        {"pads", attr_ints({1, 1, 1, 1})},
                        {"output_padding", attr_ints({1, 0})}},
                       "ConvTranspose"),
            (ir::Shape{1, 3, 10, 9}));
  EXPECT_EQ(conv_shape({1, 4, 5, 5}, {4, 3, 3, 3}, {{"group", attr_int(2)}}, "ConvTranspose"),
            (ir::Shape{1, 6, 7, 7}));
  EXPECT_EQ(conv_shape({1, 4, 5, 5}, {4, 3, 3, 3},
                       {{"strides", attr_ints({2, 2})}, {"auto_pad", attr_string("SAME_UPPER")}},
                       "ConvTranspose"),
            (ir::Shape{1, 3, 10, 10}));
  EXPECT_EQ(conv_shape({1, 4, 5, 5}, {4, 3, 3, 3},
                       {{"strides", attr_ints({2, 2})}, {"output_shape", attr_ints({10, 9})}},
                       "ConvTranspose"),
            (ir::Shape{1, 3, 10, 9}));
}

ir::Shape pool_shape(const std::string& op, ir::Shape x,
                     std::map<std::string, ir::AttrValue> attrs) {
  GraphBuilder b;
  b.input("x", std::move(x));
  b.node(op, {"x"}, {"y"}, attrs);
  b.output("y");
  return output_shape(b);
}

TEST(ShapeInference, PoolOutputExtents) {
  EXPECT_EQ(pool_shape("MaxPool", {1, 64, 112, 112},
                       {{"kernel_shape", attr_ints({3, 3})},
                        {"strides", attr_ints({2, 2})},
                        {"pads", attr_ints({1, 1, 1, 1})}}),
            (ir::Shape{1, 64, 56, 56}));
  EXPECT_EQ(pool_shape("MaxPool", {1, 1, 6, 6},
                       {{"kernel_shape", attr_ints({3, 3})}, {"strides", attr_ints({2, 2})}}),
            (ir::Shape{1, 1, 2, 2}));
  EXPECT_EQ(pool_shape("MaxPool", {1, 1, 6, 6},
                       {{"kernel_shape", attr_ints({3, 3})},
                        {"strides", attr_ints({2, 2})},
                        {"ceil_mode", attr_int(1)}}),
            (ir::Shape{1, 1, 3, 3}));
  EXPECT_EQ(pool_shape("AveragePool", {1, 1, 5, 7},
                       {{"kernel_shape", attr_ints({2, 2})},
                        {"strides", attr_ints({2, 2})},
                        {"auto_pad", attr_string("SAME_LOWER")}}),
            (ir::Shape{1, 1, 3, 4}));
  EXPECT_EQ(pool_shape("GlobalAveragePool", {2, 3, 5, 7}, {}), (ir::Shape{2, 3, 1, 1}));
}

TEST(ShapeInference, ReductionsKeepOrDropAxes) {
  EXPECT_EQ(pool_shape("ReduceMean", {2, 3, 4}, {{"axes", attr_ints({-1, 0})}}),
            (ir::Shape{1, 3, 1}));
  EXPECT_EQ(
      pool_shape("ReduceMean", {2, 3, 4}, {{"axes", attr_ints({1})}, {"keepdims", attr_int(0)}}),
      (ir::Shape{2, 4}));
  EXPECT_EQ(pool_shape("ReduceSum", {2, 3, 4}, {{"keepdims", attr_int(0)}}), (ir::Shape{}));
}

TEST(ShapeInference, GatherAndLayerNormalization) {
  GraphBuilder b;
  b.input("data", {5, 4, 3});
  b.input("indices", {2, 6}, ir::DType::Int32);
  b.node("Gather", {"data", "indices"}, {"g"}, {{"axis", attr_int(-2)}});
  b.weight("scale", {3}, {1, 1, 1});
  b.node("LayerNormalization", {"g", "scale"}, {"y"});
  b.output("y");
  EXPECT_EQ(output_shape(b), (ir::Shape{5, 2, 6, 3}));
}

}  // namespace
}  // namespace tlmc::test
