// MaxPool, AveragePool and GlobalAveragePool against values worked out by hand: padding
// (-inf for MaxPool, counted or not for AveragePool), ceil_mode, dilations.
#include <gtest/gtest.h>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

reference::HostTensor pool(const std::string& op, ir::Shape shape,
                           std::map<std::string, ir::AttrValue> attrs,
                           const std::vector<float>& x) {
  GraphBuilder b;
  b.input("x", std::move(shape));
  b.node(op, {"x"}, {"y"}, attrs);
  b.output("y");
  return run(b.build(), {x});
}

TEST(MaxPool, TakesTheMaximumOfEachWindow) {
  std::vector<float> x;
  for (int i = 1; i <= 16; ++i) x.push_back(static_cast<float>(i));
  const auto y = pool("MaxPool", {1, 1, 4, 4},
                      {{"kernel_shape", attr_ints({2, 2})}, {"strides", attr_ints({2, 2})}}, x);
  EXPECT_EQ(y.type.shape, (ir::Shape{1, 1, 2, 2}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{6, 8, 14, 16}), 0);
}

TEST(MaxPool, PaddingIsMinusInfinityNotZero) {
  const auto y = pool("MaxPool", {1, 1, 3, 3},
                      {{"kernel_shape", attr_ints({2, 2})}, {"pads", attr_ints({1, 1, 1, 1})}},
                      {-1, -2, -3, -4, -5, -6, -7, -8, -9});
  EXPECT_EQ(y.type.shape, (ir::Shape{1, 1, 4, 4}));
  EXPECT_FLOATS_NEAR(
      floats_of(y),
      (std::vector<float>{-1, -1, -2, -3, -1, -1, -2, -3, -4, -4, -5, -6, -7, -7, -8, -9}), 0);
}

TEST(MaxPool, CeilModeKeepsThePartialLastWindow) {
  std::vector<float> x;
  for (int i = 1; i <= 16; ++i) x.push_back(static_cast<float>(i));
  const auto y = pool("MaxPool", {1, 1, 4, 4},
                      {{"kernel_shape", attr_ints({3, 3})},
                       {"strides", attr_ints({2, 2})},
                       {"ceil_mode", attr_int(1)}},
                      x);
  EXPECT_EQ(y.type.shape, (ir::Shape{1, 1, 2, 2}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{11, 12, 15, 16}), 0);
}

TEST(MaxPool, CeilModeDropsAWindowStartingInTheEndPadding) {
  // Padded extent 7, kernel 2, stride 2: ceil gives 4 windows, but the 4th would start at
  // 6, inside the end padding, so there are 3.
  const auto y = pool("MaxPool", {1, 1, 1, 5},
                      {{"kernel_shape", attr_ints({1, 2})},
                       {"strides", attr_ints({1, 2})},
                       {"pads", attr_ints({0, 1, 0, 1})},
                       {"ceil_mode", attr_int(1)}},
                      {1, 2, 3, 4, 5});
  EXPECT_EQ(y.type.shape, (ir::Shape{1, 1, 1, 3}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{1, 3, 5}), 0);
}

TEST(MaxPool, DilationsSpreadTheWindow) {
  const auto y = pool("MaxPool", {1, 1, 1, 5},
                      {{"kernel_shape", attr_ints({1, 2})}, {"dilations", attr_ints({1, 2})}},
                      {5, 1, 4, 2, 3});
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{5, 2, 4}), 0);
}

TEST(AveragePool, CountIncludePadDecidesTheDivisor) {
  const std::map<std::string, ir::AttrValue> attrs = {{"kernel_shape", attr_ints({2, 2})},
                                                      {"strides", attr_ints({2, 2})},
                                                      {"pads", attr_ints({1, 1, 1, 1})}};
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto with = [&](int64_t count_include_pad) {
    std::map<std::string, ir::AttrValue> a = attrs;
    a["count_include_pad"] = attr_int(count_include_pad);
    return floats_of(pool("AveragePool", {1, 1, 3, 3}, a, x));
  };
  // Windows: {1}, {2, 3}, {4, 7}, {5, 6, 8, 9}.
  EXPECT_FLOATS_NEAR(with(0), (std::vector<float>{1, 2.5f, 5.5f, 7}), 1e-6);
  EXPECT_FLOATS_NEAR(with(1), (std::vector<float>{0.25f, 1.25f, 2.75f, 7}), 1e-6);
}

TEST(AveragePool, OneDimensionalPaddingBothWays) {
  auto with = [&](int64_t count_include_pad) {
    return floats_of(pool("AveragePool", {1, 1, 1, 3},
                          {{"kernel_shape", attr_ints({1, 2})},
                           {"pads", attr_ints({0, 1, 0, 1})},
                           {"count_include_pad", attr_int(count_include_pad)}},
                          {1, 2, 3}));
  };
  EXPECT_FLOATS_NEAR(with(0), (std::vector<float>{1, 1.5f, 2.5f, 3}), 1e-6);
  EXPECT_FLOATS_NEAR(with(1), (std::vector<float>{0.5f, 1.5f, 2.5f, 1.5f}), 1e-6);
}

TEST(AveragePool, CeilModeWindowPastThePaddingCountsOnlyRealPositions) {
  for (int64_t count_include_pad : {0, 1}) {
    const auto y = pool("AveragePool", {1, 1, 1, 5},
                        {{"kernel_shape", attr_ints({1, 2})},
                         {"strides", attr_ints({1, 2})},
                         {"ceil_mode", attr_int(1)},
                         {"count_include_pad", attr_int(count_include_pad)}},
                        {1, 2, 3, 4, 5});
    EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{1.5f, 3.5f, 5}), 1e-6);
  }
}

TEST(GlobalAveragePool, AveragesEachPlane) {
  const auto y = pool("GlobalAveragePool", {1, 2, 2, 2}, {}, {1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(y.type.shape, (ir::Shape{1, 2, 1, 1}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{2.5f, 6.5f}), 1e-6);
}

}  // namespace
}  // namespace tlmc::test
