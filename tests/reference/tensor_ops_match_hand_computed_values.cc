// Reshape, Flatten, Identity, Transpose, Concat, Gather, ReduceMean and ReduceSum against
// values worked out by hand, on float32 and int64 data.
#include <gtest/gtest.h>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

std::vector<float> iota(int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<float>(i));
  return v;
}

TEST(Reshape, ZeroCopiesADimensionAndMinusOneIsInferred) {
  GraphBuilder b;
  b.input("x", {2, 3, 4});
  b.weight_i64("shape", {2}, {0, -1});
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y");
  const auto y = run(b.build(), {iota(24)});
  EXPECT_EQ(y.type.shape, (ir::Shape{2, 12}));
  EXPECT_FLOATS_NEAR(floats_of(y), iota(24), 0);
}

TEST(Reshape, AllowZeroKeepsALiteralZero) {
  GraphBuilder b;
  b.input("x", {0, 3});
  b.weight_i64("shape", {2}, {3, 0});
  b.node("Reshape", {"x", "shape"}, {"y"}, {{"allowzero", attr_int(1)}});
  b.output("y");
  EXPECT_EQ(output_shape(b), (ir::Shape{3, 0}));
}

TEST(Flatten, SplitsAtTheAxis) {
  for (auto [axis, expected] : std::vector<std::pair<int64_t, ir::Shape>>{
           {0, {1, 24}}, {1, {2, 12}}, {2, {6, 4}}, {3, {24, 1}}, {-1, {6, 4}}}) {
    GraphBuilder b;
    b.input("x", {2, 3, 4});
    b.node("Flatten", {"x"}, {"y"}, {{"axis", attr_int(axis)}});
    b.output("y");
    const auto y = run(b.build(), {iota(24)});
    EXPECT_EQ(y.type.shape, expected) << "axis " << axis;
    EXPECT_FLOATS_NEAR(floats_of(y), iota(24), 0);
  }
}

TEST(Transpose, ReversesTheAxesByDefault) {
  GraphBuilder b;
  b.input("x", {2, 3});
  b.node("Transpose", {"x"}, {"y"});
  b.output("y");
  const auto y = run(b.build(), {iota(6)});
  EXPECT_EQ(y.type.shape, (ir::Shape{3, 2}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{0, 3, 1, 4, 2, 5}), 0);
}

TEST(Transpose, FollowsPerm) {
  GraphBuilder b;
  b.input("x", {2, 1, 3});
  b.node("Transpose", {"x"}, {"y"}, {{"perm", attr_ints({1, 2, 0})}});
  b.output("y");
  const auto y = run(b.build(), {iota(6)});
  EXPECT_EQ(y.type.shape, (ir::Shape{1, 3, 2}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{0, 3, 1, 4, 2, 5}), 0);
}

TEST(Concat, JoinsAlongTheAxisNegativeOrNot) {
  for (int64_t axis : {1, -1}) {
    GraphBuilder b;
    b.input("a", {2, 1});
    b.input("b", {2, 2});
    b.node("Concat", {"a", "b"}, {"y"}, {{"axis", attr_int(axis)}});
    b.output("y");
    const auto y = run(b.build(), {{1, 2}, {3, 4, 5, 6}});
    EXPECT_EQ(y.type.shape, (ir::Shape{2, 3}));
    EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{1, 3, 4, 2, 5, 6}), 0);
  }
}

TEST(Concat, CopiesInt64Elements) {
  GraphBuilder b;
  b.input("a", {2}, ir::DType::Int64);
  b.weight_i64("b", {1}, {-7});
  b.node("Concat", {"a", "b", "a"}, {"y"}, {{"axis", attr_int(0)}});
  b.output("y");
  const auto out = reference::interpret(b.build(), {int64_tensor({2}, {1LL << 40, 2})});
  EXPECT_EQ(out.at(0).type.dtype, ir::DType::Int64);
  EXPECT_EQ(int64s_of(out.at(0)), (std::vector<int64_t>{1LL << 40, 2, -7, 1LL << 40, 2}));
}

TEST(Gather, NegativeIndicesCountFromTheEnd) {
  GraphBuilder b;
  b.input("data", {3, 2});
  b.weight_i64("indices", {2}, {-1, 0});
  b.node("Gather", {"data", "indices"}, {"y"});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4, 5, 6}});
  EXPECT_EQ(y.type.shape, (ir::Shape{2, 2}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{5, 6, 1, 2}), 0);
}

TEST(Gather, Int32IndicesAlongAnInnerAxis) {
  GraphBuilder b;
  b.input("data", {3, 2});
  b.weight_i32("indices", {1, 2}, {1, -2});
  b.node("Gather", {"data", "indices"}, {"y"}, {{"axis", attr_int(1)}});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4, 5, 6}});
  EXPECT_EQ(y.type.shape, (ir::Shape{3, 1, 2}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{2, 1, 4, 3, 6, 5}), 0);
}

TEST(Gather, RuntimeIndicesFromAnInputOnInt64Data) {
  GraphBuilder b;
  b.weight_i64("table", {4}, {10, 20, 30, 40});
  b.input("indices", {3}, ir::DType::Int64);
  b.node("Gather", {"table", "indices"}, {"y"}, {}, "lookup");
  b.output("y");
  const ir::Graph g = b.build();
  const auto out = reference::interpret(g, {int64_tensor({3}, {3, -4, 1})});
  EXPECT_EQ(int64s_of(out.at(0)), (std::vector<int64_t>{40, 10, 20}));
  try {
    reference::interpret(g, {int64_tensor({3}, {0, 4, 1})});
    FAIL() << "an index out of range must be reported";
  } catch (const Diagnostic& d) {
    EXPECT_EQ(d.message(),
              "Gather 'lookup' has index 4 out of range for axis 0 of data of shape [4]");
  }
}

TEST(Identity, CopiesItsInput) {
  GraphBuilder b;
  b.input("x", {3});
  b.node("Identity", {"x"}, {"y"});
  b.output("y");
  EXPECT_FLOATS_NEAR(floats_of(run(b.build(), {{1, 2, 3}})), (std::vector<float>{1, 2, 3}), 0);
}

TEST(ReduceMean, AveragesTheAttributeAxes) {
  GraphBuilder b;
  b.input("x", {2, 3});
  b.node("ReduceMean", {"x"}, {"y"}, {{"axes", attr_ints({1})}, {"keepdims", attr_int(0)}});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4, 5, 9}});
  EXPECT_EQ(y.type.shape, (ir::Shape{2}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{2, 6}), 1e-6);
}

TEST(ReduceMean, WithoutAxesAveragesEverything) {
  GraphBuilder b;
  b.input("x", {2, 2});
  b.node("ReduceMean", {"x"}, {"y"});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 6}});
  EXPECT_EQ(y.type.shape, (ir::Shape{1, 1}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{3}), 1e-6);
}

TEST(ReduceSum, TakesItsAxesFromInputOne) {
  GraphBuilder b;
  b.input("x", {2, 3, 2});
  b.weight_i64("axes", {2}, {-1, 0});
  b.node("ReduceSum", {"x", "axes"}, {"y"});
  b.output("y");
  const auto y = run(b.build(), {iota(12)});
  EXPECT_EQ(y.type.shape, (ir::Shape{1, 3, 1}));
  // (0 + 1 + 6 + 7), (2 + 3 + 8 + 9), (4 + 5 + 10 + 11)
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{14, 22, 30}), 1e-6);
}

TEST(ReduceSum, EmptyAxesReduceAllUnlessNoop) {
  for (int64_t noop : {0, 1}) {
    GraphBuilder b;
    b.input("x", {2, 2});
    b.node("ReduceSum", {"x"}, {"y"},
           {{"keepdims", attr_int(0)}, {"noop_with_empty_axes", attr_int(noop)}});
    b.output("y");
    const auto y = run(b.build(), {{1, 2, 3, 4}});
    if (noop) {
      EXPECT_EQ(y.type.shape, (ir::Shape{2, 2}));
      EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{1, 2, 3, 4}), 0);
    } else {
      EXPECT_EQ(y.type.shape, (ir::Shape{}));
      EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{10}), 0);
    }
  }
}

}  // namespace
}  // namespace tlmc::test
