// Comparisons, Not/And/Or, Where, Cast, Max/Min and integer arithmetic against values worked
// out by hand: bool results, broadcasting, and the integer rules (truncating division, 0 for
// a division by zero, float-to-integer truncation and wrapping).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

using Values = std::vector<double>;

// `op` on two int64 weights; the result as doubles.
Values int_binary(const std::string& op, ir::Shape a_shape, const std::vector<int64_t>& a,
                  ir::Shape b_shape, const std::vector<int64_t>& b_values) {
  GraphBuilder b;
  b.weight_i64("a", std::move(a_shape), a);
  b.weight_i64("b", std::move(b_shape), b_values);
  b.node(op, {"a", "b"}, {"y"});
  b.output("y");
  return values_of(run_outputs(b.build()).at(0));
}

TEST(Comparison, IntegerOperandsBroadcastToBools) {
  EXPECT_EQ(int_binary("Equal", {3}, {1, 2, 3}, {1}, {2}), (Values{0, 1, 0}));
  EXPECT_EQ(int_binary("Less", {2, 1}, {1, 3}, {2}, {2, 3}), (Values{1, 1, 0, 0}));
  EXPECT_EQ(int_binary("Greater", {3}, {1, 2, 3}, {}, {2}), (Values{0, 0, 1}));
  EXPECT_EQ(int_binary("LessOrEqual", {3}, {1, 2, 3}, {}, {2}), (Values{1, 1, 0}));
  EXPECT_EQ(int_binary("GreaterOrEqual", {3}, {1, 2, 3}, {}, {2}), (Values{0, 1, 1}));
}

TEST(Comparison, NanIsNeitherLessNorGreaterNorEqual) {
  GraphBuilder b;
  b.weight("a", {3}, {std::nanf(""), 1, 2});
  b.weight("b", {3}, {1, std::nanf(""), 2});
  b.node("Less", {"a", "b"}, {"lt"});
  b.node("Greater", {"a", "b"}, {"gt"});
  b.node("Equal", {"a", "b"}, {"eq"});
  for (const char* o : {"lt", "gt", "eq"}) b.output(o);
  const auto out = run_outputs(b.build());
  EXPECT_EQ(values_of(out[0]), (Values{0, 0, 0}));
  EXPECT_EQ(values_of(out[1]), (Values{0, 0, 0}));
  EXPECT_EQ(values_of(out[2]), (Values{0, 0, 1}));
  EXPECT_EQ(out[2].type.dtype, ir::DType::Bool);
}

TEST(Logic, NotAndOrBroadcast) {
  GraphBuilder b;
  b.weight_bool("a", {2, 1}, {1, 0});
  b.weight_bool("b", {2}, {1, 0});
  b.node("And", {"a", "b"}, {"and"});
  b.node("Or", {"a", "b"}, {"or"});
  b.node("Not", {"b"}, {"not"});
  for (const char* o : {"and", "or", "not"}) b.output(o);
  const auto out = run_outputs(b.build());
  EXPECT_EQ(values_of(out[0]), (Values{1, 0, 0, 0}));
  EXPECT_EQ(values_of(out[1]), (Values{1, 1, 1, 0}));
  EXPECT_EQ(values_of(out[2]), (Values{0, 1}));
}

TEST(Where, PicksFromBroadcastBranches) {
  GraphBuilder b;
  b.weight_bool("c", {2, 1}, {1, 0});
  b.weight("x", {3}, {1, 2, 3});
  b.weight("y", {}, {-1});
  b.weight_i64("i", {2, 1}, {10, 20});
  b.weight_i64("j", {1, 2}, {-1, -2});
  b.node("Where", {"c", "x", "y"}, {"w"});
  b.node("Where", {"c", "i", "j"}, {"wi"});
  b.output("w");
  b.output("wi");
  const auto out = run_outputs(b.build());
  EXPECT_EQ(out[0].type.shape, (ir::Shape{2, 3}));
  EXPECT_EQ(values_of(out[0]), (Values{1, 2, 3, -1, -1, -1}));
  EXPECT_EQ(values_of(out[1]), (Values{10, 10, -1, -2}));
}

Values cast(ir::DType from_dtype, const Values& x, int64_t to, ir::DType* got = nullptr) {
  GraphBuilder b;
  const int64_t n = static_cast<int64_t>(x.size());
  if (from_dtype == ir::DType::Float32)
    b.weight("x", {n}, std::vector<float>(x.begin(), x.end()));
  else
    b.weight_i64("x", {n}, std::vector<int64_t>(x.begin(), x.end()));
  b.node("Cast", {"x"}, {"y"}, {{"to", attr_int(to)}});
  b.output("y");
  const auto y = run_outputs(b.build()).at(0);
  if (got) *got = y.type.dtype;
  return values_of(y);
}

// float16 and bfloat16 round to nearest even; too large a value becomes infinity; float16
// keeps subnormals down to 2^-24, and the tie at 2^-25 goes to zero.
TEST(Cast, SixteenBitFloatsRoundToNearestEven) {
  const double inf = std::numeric_limits<double>::infinity();
  const double flt_max = std::numeric_limits<float>::max();
  ir::DType t;
  EXPECT_EQ(cast(ir::DType::Float32, {1.00390625, 1.01171875, -2.0, flt_max, 0.1}, 16, &t),
            (Values{1.0, 1.015625, -2.0, inf, 0.10009765625}));
  EXPECT_EQ(t, ir::DType::BFloat16);
  EXPECT_EQ(
      cast(ir::DType::Float32,
           {1.00048828125, 65504, 65520, std::ldexp(1.0, -25), std::ldexp(3.0, -25), -1e6}, 10, &t),
      (Values{1.0, 65504, inf, 0.0, std::ldexp(1.0, -23), -inf}));
  EXPECT_EQ(t, ir::DType::Float16);
  EXPECT_EQ(cast(ir::DType::Int64, {257, -3, 65537}, 16), (Values{256, -3, 65536}));
  const Values nan = cast(ir::DType::Float32, {std::nan("")}, 16);
  EXPECT_TRUE(std::isnan(nan.at(0)));
}

TEST(Cast, FloatsTruncateTowardZeroAndWrap) {
  ir::DType t;
  EXPECT_EQ(cast(ir::DType::Float32, {-2.7, -0.5, 0.5, 2.7}, 7, &t), (Values{-2, 0, 0, 2}));
  EXPECT_EQ(t, ir::DType::Int64);
  EXPECT_EQ(cast(ir::DType::Float32, {300.5, -129}, 3, &t), (Values{44, 127}));
  EXPECT_EQ(t, ir::DType::Int8);
  EXPECT_EQ(cast(ir::DType::Float32, {-1, 256.9}, 2), (Values{255, 0}));
  EXPECT_EQ(cast(ir::DType::Float32, {-2.5, 7}, 6, &t), (Values{-2, 7}));
  EXPECT_EQ(t, ir::DType::Int32);
}

TEST(Cast, NonZeroIsTrue) {
  ir::DType t;
  EXPECT_EQ(cast(ir::DType::Float32, {0, -0.0, 0.25, -3}, 9, &t), (Values{0, 0, 1, 1}));
  EXPECT_EQ(t, ir::DType::Bool);
  EXPECT_EQ(cast(ir::DType::Int64, {0, 5, -1}, 9), (Values{0, 1, 1}));
  EXPECT_EQ(cast(ir::DType::Int64, {3, -4}, 1, &t), (Values{3, -4}));
  EXPECT_EQ(t, ir::DType::Float32);
}

TEST(IntegerArithmetic, DivisionTruncatesAndByZeroGivesZero) {
  EXPECT_EQ(int_binary("Div", {4}, {7, -7, 7, -7}, {4}, {2, 2, -2, 0}), (Values{3, -3, -3, 0}));
  EXPECT_EQ(int_binary("Add", {2}, {1, 2}, {2, 1}, {10, 20}), (Values{11, 12, 21, 22}));
  EXPECT_EQ(int_binary("Sub", {2}, {1, 2}, {}, {5}), (Values{-4, -3}));
  EXPECT_EQ(int_binary("Mul", {2}, {3, -4}, {}, {-2}), (Values{-6, 8}));
}

TEST(IntegerArithmetic, LargeValuesStayExact) {
  GraphBuilder b;
  const int64_t big = (int64_t{1} << 60) + 1;
  b.weight_i64("a", {1}, {big});
  b.weight_i64("b", {1}, {2});
  b.node("Add", {"a", "b"}, {"y"});
  b.output("y");
  EXPECT_EQ(int64s_of(run_outputs(b.build()).at(0)), (std::vector<int64_t>{big + 2}));
}

TEST(MaxMin, VariadicWithBroadcasting) {
  GraphBuilder b;
  b.weight("a", {3}, {1, 5, 3});
  b.weight("b", {2, 1}, {2, 4});
  b.weight("c", {}, {3.5f});
  b.weight_i64("i", {2}, {-3, 7});
  b.weight_i64("j", {1}, {0});
  b.node("Max", {"a", "b", "c"}, {"max"});
  b.node("Min", {"a", "b"}, {"min"});
  b.node("Max", {"a"}, {"one"});
  b.node("Min", {"i", "j"}, {"imin"});
  for (const char* o : {"max", "min", "one", "imin"}) b.output(o);
  const auto out = run_outputs(b.build());
  EXPECT_EQ(values_of(out[0]), (Values{3.5, 5, 3.5, 4, 5, 4}));
  EXPECT_EQ(values_of(out[1]), (Values{1, 2, 2, 1, 4, 3}));
  EXPECT_EQ(values_of(out[2]), (Values{1, 5, 3}));
  EXPECT_EQ(values_of(out[3]), (Values{-3, 0}));
}

}  // namespace
}  // namespace tlmc::test
