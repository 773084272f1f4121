// MatMul (numpy rules: broadcast batch dimensions, 1-D operands) and Gemm (transposes,
// alpha, beta, broadcast C) against values worked out by hand.
#include <gtest/gtest.h>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

reference::HostTensor matmul(ir::Shape a_shape, ir::Shape b_shape, const std::vector<float>& a,
                             const std::vector<float>& b_values) {
  GraphBuilder b;
  b.input("a", std::move(a_shape));
  b.input("b", std::move(b_shape));
  b.node("MatMul", {"a", "b"}, {"y"});
  b.output("y");
  return run(b.build(), {a, b_values});
}

// B's three columns [1, 0], [0, 1], [1, 1] as a [3, 2] matrix or a batch.
const std::vector<float> kColumns = {1, 0, 0, 1, 1, 1};

TEST(MatMul, MultipliesMatrices) {
  const auto y = matmul({2, 3}, {3, 2}, {1, 2, 3, 4, 5, 6}, {1, 0, 0, 1, 1, 1});
  EXPECT_EQ(y.type.shape, (ir::Shape{2, 2}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{4, 5, 10, 11}), 1e-6);
}

TEST(MatMul, BroadcastsAMatrixOverABatch) {
  const auto y = matmul({2, 2}, {3, 2, 1}, {1, 2, 3, 4}, kColumns);
  EXPECT_EQ(y.type.shape, (ir::Shape{3, 2, 1}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{1, 3, 2, 4, 3, 7}), 1e-6);
}

TEST(MatMul, BroadcastsBatchDimensionsBothWays) {
  // a: batch [2, 1] of rows [1, 2] and [3, 4]; b: batch [3] of the columns.
  const auto y = matmul({2, 1, 1, 2}, {3, 2, 1}, {1, 2, 3, 4}, kColumns);
  EXPECT_EQ(y.type.shape, (ir::Shape{2, 3, 1, 1}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{1, 2, 3, 3, 4, 7}), 1e-6);
}

TEST(MatMul, OneDimensionalOperandsFollowNumpy) {
  const auto row = matmul({3}, {3, 2}, {1, 2, 3}, {1, 0, 0, 1, 1, 1});
  EXPECT_EQ(row.type.shape, (ir::Shape{2}));
  EXPECT_FLOATS_NEAR(floats_of(row), (std::vector<float>{4, 5}), 1e-6);
  const auto column = matmul({2, 3}, {3}, {1, 2, 3, 4, 5, 6}, {1, 0, 1});
  EXPECT_EQ(column.type.shape, (ir::Shape{2}));
  EXPECT_FLOATS_NEAR(floats_of(column), (std::vector<float>{4, 10}), 1e-6);
  const auto dot = matmul({3}, {3}, {1, 2, 3}, {4, 5, 6});
  EXPECT_EQ(dot.type.shape, (ir::Shape{}));
  EXPECT_FLOATS_NEAR(floats_of(dot), (std::vector<float>{32}), 1e-6);
  const auto batched = matmul({3}, {2, 3, 1}, {1, 2, 3}, {1, 1, 1, 0, 0, 2});
  EXPECT_EQ(batched.type.shape, (ir::Shape{2, 1}));
  EXPECT_FLOATS_NEAR(floats_of(batched), (std::vector<float>{6, 6}), 1e-6);
}

// A = [[1, 2, 3], [4, 5, 6]], B = [[1, 0], [0, 1], [1, 1]]: A B = [[4, 5], [10, 11]].
reference::HostTensor gemm(bool trans_a, bool trans_b, const std::string& c_name, ir::Shape c_shape,
                           const std::vector<float>& c_values, double alpha, double beta) {
  GraphBuilder b;
  b.input("a", trans_a ? ir::Shape{3, 2} : ir::Shape{2, 3});
  b.weight("b", trans_b ? ir::Shape{2, 3} : ir::Shape{3, 2},
           trans_b ? std::vector<float>{1, 0, 1, 0, 1, 1} : std::vector<float>{1, 0, 0, 1, 1, 1});
  if (!c_name.empty()) b.weight(c_name, std::move(c_shape), c_values);
  b.node("Gemm", {"a", "b", c_name}, {"y"},
         {{"transA", attr_int(trans_a)},
          {"transB", attr_int(trans_b)},
          {"alpha", attr_float(alpha)},
          {"beta", attr_float(beta)}});
  b.output("y");
  const std::vector<float> a =
      trans_a ? std::vector<float>{1, 4, 2, 5, 3, 6} : std::vector<float>{1, 2, 3, 4, 5, 6};
  return run(b.build(), {a});
}

TEST(Gemm, TransposesEitherOperand) {
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      SCOPED_TRACE(std::string("transA ") + (ta ? "1" : "0") + " transB " + (tb ? "1" : "0"));
      const auto y = gemm(ta, tb, "", {}, {}, 1.0, 1.0);
      EXPECT_EQ(y.type.shape, (ir::Shape{2, 2}));
      EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{4, 5, 10, 11}), 1e-6);
    }
}

TEST(Gemm, ScalesAndBroadcastsC) {
  // 2 * A B + 0.5 * C
  EXPECT_FLOATS_NEAR(floats_of(gemm(false, false, "c", {2}, {100, 200}, 2.0, 0.5)),
                     (std::vector<float>{58, 110, 70, 122}), 1e-5);
  EXPECT_FLOATS_NEAR(floats_of(gemm(false, true, "c", {2, 1}, {100, 200}, 2.0, 0.5)),
                     (std::vector<float>{58, 60, 120, 122}), 1e-5);
  EXPECT_FLOATS_NEAR(floats_of(gemm(true, false, "c", {}, {4}, 1.0, 1.0)),
                     (std::vector<float>{8, 9, 14, 15}), 1e-5);
  EXPECT_FLOATS_NEAR(floats_of(gemm(true, true, "c", {2, 2}, {1, 2, 3, 4}, 1.0, -1.0)),
                     (std::vector<float>{3, 3, 7, 7}), 1e-5);
}

}  // namespace
}  // namespace tlmc::test
