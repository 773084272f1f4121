// Softmax, LayerNormalization and BatchNormalization against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

reference::HostTensor softmax(ir::Shape shape, int64_t axis, const std::vector<float>& x) {
  GraphBuilder b;
  b.input("x", std::move(shape));
  b.node("Softmax", {"x"}, {"y"}, {{"axis", attr_int(axis)}});
  b.output("y");
  return run(b.build(), {x});
}

TEST(Softmax, NormalisesTheLastAxisByDefault) {
  GraphBuilder b;
  b.input("x", {2, 3});
  b.node("Softmax", {"x"}, {"y"});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 0, 0, 0}});
  const float s = 1 + std::exp(-1.0f) + std::exp(-2.0f);
  EXPECT_FLOATS_NEAR(floats_of(y),
                     (std::vector<float>{std::exp(-2.0f) / s, std::exp(-1.0f) / s, 1 / s, 1 / 3.0f,
                                         1 / 3.0f, 1 / 3.0f}),
                     1e-6);
}

TEST(Softmax, NormalisesOnlyTheGivenAxis) {
  // Over axis 0 of [[1, 2], [3, 4]]: each column is softmax([a, a + 2]).
  const float lo = 1 / (1 + std::exp(2.0f)), hi = 1 - lo;
  EXPECT_FLOATS_NEAR(floats_of(softmax({2, 2}, 0, {1, 2, 3, 4})),
                     (std::vector<float>{lo, lo, hi, hi}), 1e-6);
  // Axis 1 of a [1, 2, 2]: the middle axis, not the trailing ones together.
  EXPECT_FLOATS_NEAR(floats_of(softmax({1, 2, 2}, 1, {1, 2, 3, 4})),
                     (std::vector<float>{lo, lo, hi, hi}), 1e-6);
}

TEST(Softmax, IsStableForLargeInputs) {
  EXPECT_FLOATS_NEAR(floats_of(softmax({2}, -1, {1000, 1000})), (std::vector<float>{0.5f, 0.5f}),
                     1e-6);
}

TEST(LayerNormalization, NormalisesTheLastAxisThenScalesAndShifts) {
  GraphBuilder b;
  b.input("x", {2, 4});
  b.weight("scale", {4}, {1, 1, 2, 2});
  b.weight("bias", {4}, {0, 0, 0, 1});
  b.node("LayerNormalization", {"x", "scale", "bias"}, {"y"});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4, 2, 2, 2, 2}});
  // Row 0: mean 2.5, variance 1.25. Row 1: constant, so it normalises to 0.
  const float d = std::sqrt(1.25f + 1e-5f);
  EXPECT_FLOATS_NEAR(
      floats_of(y),
      (std::vector<float>{-1.5f / d, -0.5f / d, 2 * 0.5f / d, 2 * 1.5f / d + 1, 0, 0, 0, 1}), 1e-5);
}

TEST(LayerNormalization, AxisOneNormalisesAllTrailingAxes) {
  GraphBuilder b;
  b.input("x", {2, 2, 2});
  b.weight("scale", {2, 2}, {1, 1, 1, 1});
  b.node("LayerNormalization", {"x", "scale"}, {"y"},
         {{"axis", attr_int(1)}, {"epsilon", attr_float(0.0)}});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4, 0, 0, 0, 4}});
  const float a = std::sqrt(1.25f), c = std::sqrt(3.0f);
  EXPECT_FLOATS_NEAR(
      floats_of(y),
      (std::vector<float>{-1.5f / a, -0.5f / a, 0.5f / a, 1.5f / a, -1 / c, -1 / c, -1 / c, 3 / c}),
      1e-5);
}

TEST(BatchNormalization, AppliesEachChannelsStatistics) {
  GraphBuilder b;
  b.input("x", {1, 2, 1, 2});
  b.weight("scale", {2}, {1, 2});
  b.weight("bias", {2}, {0, 1});
  b.weight("mean", {2}, {1, 3});
  b.weight("var", {2}, {4, 1});
  b.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"},
         {{"epsilon", attr_float(0.0)}});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4}});
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{0, 0.5f, 1, 3}), 1e-6);
}

}  // namespace
}  // namespace tlmc::test
