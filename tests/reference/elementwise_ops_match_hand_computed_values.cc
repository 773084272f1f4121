// The element-wise float operators against values worked out by hand, including numpy
// broadcasting of the binary ones, variadic Max and Min, and Clip's optional bounds.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

std::vector<float> unary(const std::string& op, const std::vector<float>& x,
                         std::map<std::string, ir::AttrValue> attrs = {}) {
  GraphBuilder b;
  b.input("x", {static_cast<int64_t>(x.size())});
  b.node(op, {"x"}, {"y"}, attrs);
  b.output("y");
  return floats_of(run(b.build(), {x}));
}

TEST(Unary, ActivationsAndFunctions) {
  EXPECT_FLOATS_NEAR(unary("Relu", {-2, 0, 3}), (std::vector<float>{0, 0, 3}), 0);
  EXPECT_FLOATS_NEAR(unary("LeakyRelu", {-2, 3}), (std::vector<float>{-0.02f, 3}), 1e-7);
  EXPECT_FLOATS_NEAR(unary("LeakyRelu", {-2, 3}, {{"alpha", attr_float(0.5)}}),
                     (std::vector<float>{-1, 3}), 1e-7);
  EXPECT_FLOATS_NEAR(unary("Sigmoid", {0, 2}),
                     (std::vector<float>{0.5f, 1 / (1 + std::exp(-2.0f))}), 1e-7);
  EXPECT_FLOATS_NEAR(unary("Tanh", {0, 1}), (std::vector<float>{0, 0.7615942f}), 1e-6);
  EXPECT_FLOATS_NEAR(unary("Erf", {0, 0.5f}), (std::vector<float>{0, 0.5204999f}), 1e-6);
  EXPECT_FLOATS_NEAR(unary("Exp", {0, 1}), (std::vector<float>{1, 2.7182818f}), 1e-6);
  EXPECT_FLOATS_NEAR(unary("Sqrt", {4, 2}), (std::vector<float>{2, 1.4142135f}), 1e-6);
  EXPECT_FLOATS_NEAR(unary("Log", {1, 2.7182818f}), (std::vector<float>{0, 1}), 1e-6);
  EXPECT_FLOATS_NEAR(unary("Neg", {-2, 3}), (std::vector<float>{2, -3}), 0);
  EXPECT_FLOATS_NEAR(unary("Abs", {-2, 3}), (std::vector<float>{2, 3}), 0);
  EXPECT_FLOATS_NEAR(unary("Reciprocal", {4, -0.5f}), (std::vector<float>{0.25f, -2}), 0);
  EXPECT_FLOATS_NEAR(unary("Floor", {-1.5f, 1.5f, 2}), (std::vector<float>{-2, 1, 2}), 0);
}

// max(0, min(1, alpha x + beta)), alpha 0.2 and beta 0.5 by default; HardSwish is
// x * HardSigmoid(x) with alpha 1/6.
TEST(Unary, HardSigmoidAndHardSwish) {
  EXPECT_FLOATS_NEAR(unary("HardSigmoid", {-3, -1, 0, 1, 3}),
                     (std::vector<float>{0, 0.3f, 0.5f, 0.7f, 1}), 1e-7);
  EXPECT_FLOATS_NEAR(
      unary("HardSigmoid", {-1, 1}, {{"alpha", attr_float(0.5)}, {"beta", attr_float(0.25)}}),
      (std::vector<float>{0, 0.75f}), 1e-7);
  EXPECT_FLOATS_NEAR(unary("HardSwish", {-4, -1, 0, 1, 4}),
                     (std::vector<float>{0, -1.0f / 3, 0, 2.0f / 3, 4}), 1e-6);
}

std::vector<float> binary(const std::string& op, ir::Shape a_shape, const std::vector<float>& a,
                          ir::Shape b_shape, const std::vector<float>& b_values, ir::Shape expect) {
  GraphBuilder b;
  b.input("a", std::move(a_shape));
  b.input("b", std::move(b_shape));
  b.node(op, {"a", "b"}, {"y"});
  b.output("y");
  const auto y = run(b.build(), {a, b_values});
  EXPECT_EQ(y.type.shape, expect);
  return floats_of(y);
}

TEST(Binary, BroadcastsLikeNumpy) {
  EXPECT_FLOATS_NEAR(binary("Add", {2, 1}, {10, 20}, {3}, {1, 2, 3}, {2, 3}),
                     (std::vector<float>{11, 12, 13, 21, 22, 23}), 0);
  EXPECT_FLOATS_NEAR(binary("Sub", {3}, {1, 2, 3}, {2, 1}, {10, 20}, {2, 3}),
                     (std::vector<float>{-9, -8, -7, -19, -18, -17}), 0);
  EXPECT_FLOATS_NEAR(binary("Mul", {2, 2}, {1, 2, 3, 4}, {}, {3}, {2, 2}),
                     (std::vector<float>{3, 6, 9, 12}), 0);
  EXPECT_FLOATS_NEAR(binary("Div", {1, 2}, {1, 2}, {2, 1}, {2, 4}, {2, 2}),
                     (std::vector<float>{0.5f, 1, 0.25f, 0.5f}), 0);
  EXPECT_FLOATS_NEAR(binary("Pow", {3}, {2, 3, 4}, {1}, {2}, {3}), (std::vector<float>{4, 9, 16}),
                     1e-5);
}

std::vector<float> clip(const std::vector<float>* lo, const std::vector<float>* hi) {
  GraphBuilder b;
  b.input("x", {4});
  if (lo) b.weight("lo", {}, *lo);
  if (hi) b.weight("hi", {1}, *hi);
  b.node("Clip", {"x", lo ? "lo" : "", hi ? "hi" : ""}, {"y"});
  b.output("y");
  return floats_of(run(b.build(), {{-5, -1, 1, 5}}));
}

TEST(Clip, OptionalBoundsAreInputs) {
  const std::vector<float> zero = {0}, two = {2};
  EXPECT_FLOATS_NEAR(clip(nullptr, nullptr), (std::vector<float>{-5, -1, 1, 5}), 0);
  EXPECT_FLOATS_NEAR(clip(&zero, nullptr), (std::vector<float>{0, 0, 1, 5}), 0);
  EXPECT_FLOATS_NEAR(clip(nullptr, &two), (std::vector<float>{-5, -1, 1, 2}), 0);
  EXPECT_FLOATS_NEAR(clip(&zero, &two), (std::vector<float>{0, 0, 1, 2}), 0);
  // min > max: everything becomes max.
  EXPECT_FLOATS_NEAR(clip(&two, &zero), (std::vector<float>{0, 0, 0, 0}), 0);
}

}  // namespace
}  // namespace tlmc::test
