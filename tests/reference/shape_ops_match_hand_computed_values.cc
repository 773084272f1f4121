// Shape, Unsqueeze, Squeeze, ConstantOfShape, Range, Expand and Tile against values worked
// out by hand.
#include <gtest/gtest.h>

#include <limits>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

using Values = std::vector<double>;

// The output shape and values of `op` on input x of shape {2, 3, 4, 5}.
reference::HostTensor shape_of(std::map<std::string, ir::AttrValue> attrs) {
  GraphBuilder b;
  b.input("x", {2, 3, 4, 5});
  b.node("Shape", {"x"}, {"y"}, attrs);
  b.output("y");
  return run(b.build(), {std::vector<float>(120, 0)});
}

TEST(Shape, StartAndEndCountFromTheBackAndClamp) {
  EXPECT_EQ(int64s_of(shape_of({})), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(int64s_of(shape_of({{"start", attr_int(1)}})), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(int64s_of(shape_of({{"start", attr_int(-3)}, {"end", attr_int(-1)}})),
            (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(int64s_of(shape_of({{"start", attr_int(-10)}, {"end", attr_int(10)}})),
            (std::vector<int64_t>{2, 3, 4, 5}));
  const auto empty = shape_of({{"start", attr_int(3)}, {"end", attr_int(1)}});
  EXPECT_EQ(empty.type.shape, (ir::Shape{0}));
}

ir::Shape view_shape(const std::string& op, ir::Shape x, const std::vector<int64_t>* axes) {
  GraphBuilder b;
  b.input("x", std::move(x));
  if (axes) b.weight_i64("axes", {static_cast<int64_t>(axes->size())}, *axes);
  b.node(op, {"x", axes ? "axes" : ""}, {"y"});
  b.output("y");
  return output_shape(b);
}

TEST(Unsqueeze, AxesNamePositionsInTheOutput) {
  const std::vector<int64_t> front = {0}, both_ends = {0, -1}, middle = {3, 1};
  EXPECT_EQ(view_shape("Unsqueeze", {3, 4}, &front), (ir::Shape{1, 3, 4}));
  EXPECT_EQ(view_shape("Unsqueeze", {3, 4}, &both_ends), (ir::Shape{1, 3, 4, 1}));
  EXPECT_EQ(view_shape("Unsqueeze", {3, 4}, &middle), (ir::Shape{3, 1, 4, 1}));
  EXPECT_EQ(view_shape("Unsqueeze", {}, &front), (ir::Shape{1}));
}

TEST(Squeeze, RemovesTheAxesGivenOrEveryUnitAxis) {
  const std::vector<int64_t> last = {-1}, two = {0, 2};
  EXPECT_EQ(view_shape("Squeeze", {1, 3, 1, 1}, nullptr), (ir::Shape{3}));
  EXPECT_EQ(view_shape("Squeeze", {1, 3, 1, 1}, &last), (ir::Shape{1, 3, 1}));
  EXPECT_EQ(view_shape("Squeeze", {1, 3, 1}, &two), (ir::Shape{3}));
  EXPECT_EQ(view_shape("Squeeze", {1}, nullptr), (ir::Shape{}));
  const std::vector<int64_t> none;
  EXPECT_EQ(view_shape("Squeeze", {1, 3, 1}, &none), (ir::Shape{3}));
}

TEST(ConstantOfShape, FillsWithTheValueInTheDtype) {
  GraphBuilder b;
  b.weight_i64("shape", {2}, {2, 3});
  b.weight_i64("scalar", {0}, {});
  b.node("ConstantOfShape", {"shape"}, {"zeros"});
  b.node("ConstantOfShape", {"shape"}, {"ints"},
         {{"value", attr_float(-7)}, {"dtype", attr_string("int64")}});
  b.node("ConstantOfShape", {"scalar"}, {"truth"},
         {{"value", attr_float(0.5)}, {"dtype", attr_string("bool")}});
  b.output("zeros");
  b.output("ints");
  b.output("truth");
  const auto out = run_outputs(b.build());
  EXPECT_EQ(out[0].type, (ir::TensorType{ir::DType::Float32, {2, 3}}));
  EXPECT_EQ(values_of(out[0]), Values(6, 0.0));
  EXPECT_EQ(int64s_of(out[1]), std::vector<int64_t>(6, -7));
  EXPECT_EQ(out[2].type, (ir::TensorType{ir::DType::Bool, {}}));
  EXPECT_EQ(values_of(out[2]), Values{1});
}

reference::HostTensor range_i64(int64_t start, int64_t limit, int64_t delta) {
  GraphBuilder b;
  b.weight_i64("start", {}, {start});
  b.weight_i64("limit", {}, {limit});
  b.weight_i64("delta", {}, {delta});
  b.node("Range", {"start", "limit", "delta"}, {"y"});
  b.output("y");
  return run_outputs(b.build()).at(0);
}

TEST(Range, CountsUpOrDownToTheLimitExcluded) {
  EXPECT_EQ(int64s_of(range_i64(0, 5, 1)), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(int64s_of(range_i64(1, 8, 3)), (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(int64s_of(range_i64(10, 4, -3)), (std::vector<int64_t>{10, 7}));
  EXPECT_EQ(range_i64(3, 3, 1).type.shape, (ir::Shape{0}));
  EXPECT_EQ(range_i64(5, 1, 2).type.shape, (ir::Shape{0}));
}

// ONNX defines each element as the one before plus delta, in float: 0.1 accumulates its
// rounding error like the ONNX reference does.
TEST(Range, FloatElementsAccumulate) {
  GraphBuilder b;
  b.weight("start", {}, {1.0f});
  b.weight("limit", {}, {1.3f});
  b.weight("delta", {}, {0.1f});
  b.node("Range", {"start", "limit", "delta"}, {"y"});
  b.output("y");
  const auto y = run_outputs(b.build()).at(0);
  ASSERT_EQ(y.type.shape, (ir::Shape{3}));  // ceil((1.3f - 1) / 0.1f) = ceil(2.9999995)
  const float one = 1.0f, step = 0.1f;
  EXPECT_EQ(floats_of(y), (std::vector<float>{one, one + step, one + step + step}));
}

TEST(Expand, BroadcastsWithTheShapeBothWays) {
  GraphBuilder b;
  b.weight("x", {3, 1}, {1, 2, 3});
  b.weight_i64("wide", {3}, {2, 1, 2});
  b.weight_i64("ones", {1}, {1});
  b.node("Expand", {"x", "wide"}, {"y"});
  b.node("Expand", {"x", "ones"}, {"same"});
  b.output("y");
  b.output("same");
  const auto out = run_outputs(b.build());
  EXPECT_EQ(out[0].type.shape, (ir::Shape{2, 3, 2}));
  EXPECT_FLOATS_NEAR(floats_of(out[0]), (std::vector<float>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}),
                     0);
  EXPECT_EQ(out[1].type.shape, (ir::Shape{3, 1}));
}

TEST(Tile, RepeatsEachAxis) {
  GraphBuilder b;
  b.weight("x", {2, 2}, {1, 2, 3, 4});
  b.weight_i64("reps", {2}, {2, 3});
  b.node("Tile", {"x", "reps"}, {"y"});
  b.output("y");
  const auto y = run_outputs(b.build()).at(0);
  EXPECT_EQ(y.type.shape, (ir::Shape{4, 6}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,  //
                                                       1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}),
                     0);
}

}  // namespace
}  // namespace tlmc::test
