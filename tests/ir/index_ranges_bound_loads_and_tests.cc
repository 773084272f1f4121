// The range of an index over its loops' extents, and the bounds tests it proves: what lets
// the CUDA emitter drop a copy's test where the copied region lies inside its source.
#include <gtest/gtest.h>

#include "ir/expr.h"

namespace tlmc::ir {
namespace {

Expr lt(const Expr& a, const Expr& b) { return make_binary(BinaryOp::LT, a, b); }
Expr le(const Expr& a, const Expr& b) { return make_binary(BinaryOp::LE, a, b); }
Expr both(const Expr& a, const Expr& b) { return make_binary(BinaryOp::And, a, b); }
Expr div(const Expr& a, int64_t c) { return make_binary(BinaryOp::FloorDiv, a, make_int(c)); }
Expr mod(const Expr& a, int64_t c) { return make_binary(BinaryOp::FloorMod, a, make_int(c)); }

TEST(IndexRanges, FollowSumsProductsAndDivisions) {
  const Expr i = make_var(1, "i"), j = make_var(2, "j");
  const std::map<int, int64_t> extents{{1, 8}, {2, 4}};
  using Range = std::pair<int64_t, int64_t>;
  EXPECT_EQ(value_range(i * 4 + j, extents), (Range{0, 31}));
  EXPECT_EQ(value_range(i - j, extents), (Range{-3, 7}));
  EXPECT_EQ(value_range(div(i * 4 + j, 4), extents), (Range{0, 7}));
  EXPECT_EQ(value_range(mod(i * 4 + j, 4), extents), (Range{0, 3}));
  // A remainder whose argument stays within one multiple keeps its range.
  EXPECT_EQ(value_range(mod(j + 8, 16), extents), (Range{8, 11}));
  EXPECT_EQ(value_range(div(i - 8, 4), extents), (Range{-2, -1}));
  // A variable of no loop around it, or a load, has no known range.
  EXPECT_FALSE(value_range(make_var(3, "k") + i, extents));
  EXPECT_FALSE(value_range(make_load(DType::Int64, 0, {i}), extents));
}

TEST(IndexRanges, ProveABoundsTestOnlyWhereItHoldsEverywhere) {
  const Expr i = make_var(1, "i"), j = make_var(2, "j");
  const std::map<int, int64_t> extents{{1, 8}, {2, 4}};
  const Expr index = i * 4 + j;  // 0 .. 31
  EXPECT_TRUE(always_true(both(le(make_int(0), index), lt(index, make_int(32))), extents));
  EXPECT_FALSE(always_true(both(le(make_int(0), index), lt(index, make_int(31))), extents));
  // A padded reader's index, one before its row: the test is needed.
  EXPECT_FALSE(always_true(le(make_int(0), index - 1), extents));
  EXPECT_FALSE(always_true(make_binary(BinaryOp::Or, lt(index, make_int(32)), lt(i, j)), extents));
  EXPECT_FALSE(always_true(lt(make_var(3, "k"), make_int(100)), extents));
}

}  // namespace
}  // namespace tlmc::ir
