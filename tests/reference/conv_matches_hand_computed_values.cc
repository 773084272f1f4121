// Conv against values worked out by hand: padding with stride, bias, groups, dilations,
// auto_pad, several input channels, and a 1-D convolution.
#include <gtest/gtest.h>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

TEST(Conv, PaddedStridedWindowsSumOnlyInsideTheInput) {
  GraphBuilder b;
  b.input("x", {1, 1, 4, 4});
  b.weight("w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  b.weight("bias", {1}, {0.5f});
  b.node("Conv", {"x", "w", "bias"}, {"y"},
         {{"pads", attr_ints({1, 1, 1, 1})}, {"strides", attr_ints({2, 2})}});
  b.output("y");
  const ir::Graph g = b.build();
  EXPECT_EQ(g.type(g.outputs[0]).shape, (ir::Shape{1, 1, 2, 2}));
  // x = 1..16 row-major; windows start at -1 and 1 on both axes.
  const auto y = run(g, {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}});
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{14.5f, 30.5f, 57.5f, 99.5f}), 1e-5);
}

TEST(Conv, SumsOverEveryInputChannel) {
  GraphBuilder b;
  b.input("x", {1, 2, 2, 2});
  b.weight("w", {1, 2, 2, 2}, {1, 0, 0, 1, 0, 1, 1, 0});
  b.node("Conv", {"x", "w"}, {"y"});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4, 5, 6, 7, 8}});
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{1 + 4 + 6 + 7}), 1e-5);
}

TEST(Conv, GroupsReadOnlyTheirOwnChannels) {
  GraphBuilder b;
  b.input("x", {1, 4, 1, 1});
  b.weight("w", {2, 2, 1, 1}, {1, 10, 100, 1000});
  b.node("Conv", {"x", "w"}, {"y"}, {{"group", attr_int(2)}});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4}});
  // Map 0 reads channels 0 and 1, map 1 channels 2 and 3.
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{1 * 1 + 10 * 2, 100 * 3 + 1000 * 4}), 1e-3);
}

TEST(Conv, DepthwiseGroupScalesEachChannel) {
  GraphBuilder b;
  b.input("x", {1, 2, 2, 2});
  b.weight("w", {4, 1, 1, 1}, {1, 2, 3, 4});
  b.node("Conv", {"x", "w"}, {"y"}, {{"group", attr_int(2)}});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4, 10, 20, 30, 40}});
  EXPECT_FLOATS_NEAR(
      floats_of(y), (std::vector<float>{1, 2, 3, 4, 2, 4, 6, 8, 30, 60, 90, 120, 40, 80, 120, 160}),
      1e-4);
}

TEST(Conv, DilationSpreadsTheKernel) {
  GraphBuilder b;
  b.input("x", {1, 1, 1, 5});
  b.weight("w", {1, 1, 1, 2}, {1, 1});
  b.node("Conv", {"x", "w"}, {"y"}, {{"dilations", attr_ints({1, 2})}});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4, 5}});
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{1 + 3, 2 + 4, 3 + 5}), 1e-5);
}

TEST(Conv, SameUpperPadsAtTheEndAndSameLowerAtTheBeginning) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    GraphBuilder b;
    b.input("x", {1, 1, 1, 4});
    b.weight("w", {1, 1, 1, 2}, {1, 1});
    b.node("Conv", {"x", "w"}, {"y"}, {{"auto_pad", attr_string(mode)}});
    b.output("y");
    const auto y = run(b.build(), {{1, 2, 3, 4}});
    const std::vector<float> expected = std::string(mode) == "SAME_UPPER"
                                            ? std::vector<float>{3, 5, 7, 4}
                                            : std::vector<float>{1, 3, 5, 7};
    EXPECT_FLOATS_NEAR(floats_of(y), expected, 1e-5);
  }
}

TEST(Conv, OneDimensionalConvolutionWithPadding) {
  GraphBuilder b;
  b.input("x", {1, 1, 5});
  b.weight("w", {1, 1, 3}, {1, 0, -1});
  b.node("Conv", {"x", "w"}, {"y"}, {{"pads", attr_ints({1, 1})}});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4, 5}});
  // y[o] = x[o - 1] - x[o + 1], zero outside.
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{-2, -2, -2, -2, 4}), 1e-5);
}

TEST(Conv, BatchesAreIndependent) {
  GraphBuilder b;
  b.input("x", {2, 1, 1, 2});
  b.weight("w", {1, 1, 1, 2}, {1, -1});
  b.node("Conv", {"x", "w"}, {"y"});
  b.output("y");
  const auto y = run(b.build(), {{5, 3, 1, 4}});
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{2, -3}), 1e-5);
}

}  // namespace
}  // namespace tlmc::test
