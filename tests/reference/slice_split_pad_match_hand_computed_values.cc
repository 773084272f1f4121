// Slice (negative indices and steps, clamping, the ends exporters write), Split (equal
// parts, given sizes, an omitted part) and Pad (every mode, negative pads) against values
// worked out by hand.
#include <gtest/gtest.h>

#include <limits>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

std::vector<float> iota(int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<float>(i));
  return v;
}

// Slices x = iota over `shape`; empty `axes` or `steps` leaves that input out.
reference::HostTensor slice(const ir::Shape& shape, const std::vector<int64_t>& starts,
                            const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                            const std::vector<int64_t>& steps) {
  GraphBuilder b;
  b.input("x", shape);
  const int64_t k = static_cast<int64_t>(starts.size());
  b.weight_i64("starts", {k}, starts);
  b.weight_i64("ends", {k}, ends);
  if (!axes.empty()) b.weight_i64("axes", {k}, axes);
  if (!steps.empty()) b.weight_i64("steps", {k}, steps);
  b.node("Slice", {"x", "starts", "ends", axes.empty() ? "" : "axes", steps.empty() ? "" : "steps"},
         {"y"});
  b.output("y");
  return run(b.build(), {iota(static_cast<int>(ir::shape_numel(shape)))});
}

TEST(Slice, NegativeIndicesCountFromTheEnd) {
  const auto y = slice({10}, {-3}, {-1}, {}, {});
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{7, 8}), 0);
}

TEST(Slice, OutOfRangeIndicesAreClamped) {
  EXPECT_FLOATS_NEAR(floats_of(slice({5}, {-100}, {100}, {}, {})), iota(5), 0);
  EXPECT_FLOATS_NEAR(floats_of(slice({5}, {3}, {kMax}, {}, {})), (std::vector<float>{3, 4}), 0);
  EXPECT_EQ(slice({5}, {7}, {9}, {}, {}).type.shape, (ir::Shape{0}));
  EXPECT_EQ(slice({5}, {3}, {1}, {}, {}).type.shape, (ir::Shape{0}));
}

// Backwards: the start clamps to the last element, the end to "before the first", so
// INT64_MIN (what torch writes for x[::-1]) reverses the whole axis.
TEST(Slice, NegativeStepsWalkBackwards) {
  EXPECT_FLOATS_NEAR(floats_of(slice({5}, {-1}, {kMin}, {}, {-1})),
                     (std::vector<float>{4, 3, 2, 1, 0}), 0);
  EXPECT_FLOATS_NEAR(floats_of(slice({6}, {kMax}, {-100}, {}, {-2})), (std::vector<float>{5, 3, 1}),
                     0);
  EXPECT_FLOATS_NEAR(floats_of(slice({6}, {4}, {1}, {}, {-2})), (std::vector<float>{4, 2}), 0);
  EXPECT_EQ(slice({6}, {1}, {4}, {}, {-1}).type.shape, (ir::Shape{0}));
}

TEST(Slice, AxesAndStepsPickDimensions) {
  // x[:, ::2, 1:] of a [2, 3, 4] iota, axes given out of order and negative.
  const auto y = slice({2, 3, 4}, {1, 0}, {kMax, kMax}, {-1, 1}, {1, 2});
  EXPECT_EQ(y.type.shape, (ir::Shape{2, 2, 3}));
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{1, 2, 3, 9, 10, 11, 13, 14, 15, 21, 22, 23}),
                     0);
}

std::vector<reference::HostTensor> split(const ir::Shape& shape, int64_t axis,
                                         const std::vector<int64_t>* sizes,
                                         const std::vector<std::string>& outputs) {
  GraphBuilder b;
  b.weight("x", shape, iota(static_cast<int>(ir::shape_numel(shape))));
  if (sizes) b.weight_i64("sizes", {static_cast<int64_t>(sizes->size())}, *sizes);
  b.node("Split", {"x", sizes ? "sizes" : ""}, outputs, {{"axis", attr_int(axis)}});
  for (const std::string& o : outputs)
    if (!o.empty()) b.output(o);
  return run_outputs(b.build());
}

TEST(Split, EqualPartsByDefault) {
  const auto parts = split({2, 6}, 1, nullptr, {"a", "b", "c"});
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_FLOATS_NEAR(floats_of(parts[0]), (std::vector<float>{0, 1, 6, 7}), 0);
  EXPECT_FLOATS_NEAR(floats_of(parts[1]), (std::vector<float>{2, 3, 8, 9}), 0);
  EXPECT_FLOATS_NEAR(floats_of(parts[2]), (std::vector<float>{4, 5, 10, 11}), 0);
  EXPECT_EQ(parts[2].type.shape, (ir::Shape{2, 2}));
}

TEST(Split, GivenSizesAlongANegativeAxis) {
  const std::vector<int64_t> sizes = {1, 0, 3};
  const auto parts = split({2, 4}, -1, &sizes, {"a", "b", "c"});
  EXPECT_FLOATS_NEAR(floats_of(parts[0]), (std::vector<float>{0, 4}), 0);
  EXPECT_EQ(parts[1].type.shape, (ir::Shape{2, 0}));
  EXPECT_FLOATS_NEAR(floats_of(parts[2]), (std::vector<float>{1, 2, 3, 5, 6, 7}), 0);
}

TEST(Split, AnOmittedPartStillTakesItsShare) {
  const auto parts = split({6}, 0, nullptr, {"a", "", "c"});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_FLOATS_NEAR(floats_of(parts[0]), (std::vector<float>{0, 1}), 0);
  EXPECT_FLOATS_NEAR(floats_of(parts[1]), (std::vector<float>{4, 5}), 0);
}

std::vector<float> pad(const std::string& mode, const ir::Shape& shape,
                       const std::vector<int64_t>& pads, const std::vector<float>* value,
                       ir::Shape* out_shape = nullptr) {
  GraphBuilder b;
  b.input("x", shape);
  b.weight_i64("pads", {static_cast<int64_t>(pads.size())}, pads);
  if (value) b.weight("value", {}, *value);
  b.node("Pad", {"x", "pads", value ? "value" : ""}, {"y"}, {{"mode", attr_string(mode)}});
  b.output("y");
  const auto y = run(b.build(), {iota(static_cast<int>(ir::shape_numel(shape)))});
  if (out_shape) *out_shape = y.type.shape;
  return floats_of(y);
}

TEST(Pad, ConstantFillsWithTheValueOrZero) {
  const std::vector<float> nine = {9};
  EXPECT_FLOATS_NEAR(pad("constant", {3}, {2, 1}, &nine), (std::vector<float>{9, 9, 0, 1, 2, 9}),
                     0);
  ir::Shape s;
  EXPECT_FLOATS_NEAR(pad("constant", {2, 2}, {1, 0, 0, 1}, nullptr, &s),
                     (std::vector<float>{0, 0, 0, 0, 1, 0, 2, 3, 0}), 0);
  EXPECT_EQ(s, (ir::Shape{3, 3}));
}

// Reflect mirrors without repeating the border (numpy's "reflect"); edge repeats it.
TEST(Pad, ReflectAndEdge) {
  EXPECT_FLOATS_NEAR(pad("reflect", {4}, {2, 3}, nullptr),
                     (std::vector<float>{2, 1, 0, 1, 2, 3, 2, 1, 0}), 0);
  EXPECT_FLOATS_NEAR(pad("edge", {3}, {2, 2}, nullptr), (std::vector<float>{0, 0, 0, 1, 2, 2, 2}),
                     0);
  EXPECT_FLOATS_NEAR(pad("reflect", {2, 3}, {1, 0, 1, 0}, nullptr),  // rows, both ends
                     (std::vector<float>{3, 4, 5, 0, 1, 2, 3, 4, 5, 0, 1, 2}), 0);
}

TEST(Pad, NegativePadsRemoveElements) {
  EXPECT_FLOATS_NEAR(pad("constant", {5}, {-2, 1}, nullptr), (std::vector<float>{2, 3, 4, 0}), 0);
  EXPECT_FLOATS_NEAR(pad("edge", {5}, {1, -3}, nullptr), (std::vector<float>{0, 0, 1}), 0);
}

}  // namespace
}  // namespace tlmc::test
