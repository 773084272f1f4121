// ConvTranspose against its definition as a scatter: every input element adds
// x * w[c, m, k] onto output position i * stride - pad_begin + k * dilation. The interpreter
// computes it as a gather, so the two formulations check each other.
#include <gtest/gtest.h>

#include <random>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

struct Case {
  int64_t batch, channels, height, width;
  int64_t maps_per_group, group, kernel_h, kernel_w;
  int64_t stride_h, stride_w, dilation_h, dilation_w;
  std::vector<int64_t> pads;            // top, left, bottom, right
  std::vector<int64_t> output_padding;  // h, w
  bool bias;
};

std::vector<float> random_values(int64_t count, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& e : v) e = dist(gen);
  return v;
}

struct Expected {
  ir::Shape shape;
  std::vector<float> values;
};

Expected scatter(const Case& c, const std::vector<float>& x, const std::vector<float>& w,
                 const std::vector<float>& bias) {
  const int64_t maps = c.maps_per_group * c.group, channels_per_group = c.channels / c.group;
  const int64_t out_h = c.stride_h * (c.height - 1) + c.output_padding[0] +
                        (c.kernel_h - 1) * c.dilation_h + 1 - c.pads[0] - c.pads[2];
  const int64_t out_w = c.stride_w * (c.width - 1) + c.output_padding[1] +
                        (c.kernel_w - 1) * c.dilation_w + 1 - c.pads[1] - c.pads[3];
  std::vector<double> y(static_cast<size_t>(c.batch * maps * out_h * out_w), 0.0);
  for (int64_t n = 0; n < c.batch; ++n)
    for (int64_t ch = 0; ch < c.channels; ++ch)
      for (int64_t ih = 0; ih < c.height; ++ih)
        for (int64_t iw = 0; iw < c.width; ++iw)
          for (int64_t ml = 0; ml < c.maps_per_group; ++ml)
            for (int64_t kh = 0; kh < c.kernel_h; ++kh)
              for (int64_t kw = 0; kw < c.kernel_w; ++kw) {
                const int64_t m = (ch / channels_per_group) * c.maps_per_group + ml;
                const int64_t oh = ih * c.stride_h - c.pads[0] + kh * c.dilation_h;
                const int64_t ow = iw * c.stride_w - c.pads[1] + kw * c.dilation_w;
                if (oh < 0 || oh >= out_h || ow < 0 || ow >= out_w) continue;
                const float xv =
                    x[static_cast<size_t>(((n * c.channels + ch) * c.height + ih) * c.width + iw)];
                const float wv = w[static_cast<size_t>(
                    ((ch * c.maps_per_group + ml) * c.kernel_h + kh) * c.kernel_w + kw)];
                y[static_cast<size_t>(((n * maps + m) * out_h + oh) * out_w + ow)] +=
                    double(xv) * wv;
              }
  Expected e{{c.batch, maps, out_h, out_w}, {}};
  for (size_t i = 0; i < y.size(); ++i) {
    const size_t m = (i / static_cast<size_t>(out_h * out_w)) % static_cast<size_t>(maps);
    e.values.push_back(static_cast<float>(y[i] + (bias.empty() ? 0.0 : bias[m])));
  }
  return e;
}

void check(const Case& c, unsigned seed) {
  const int64_t maps = c.maps_per_group * c.group;
  const std::vector<float> x = random_values(c.batch * c.channels * c.height * c.width, seed);
  const std::vector<float> w =
      random_values(c.channels * c.maps_per_group * c.kernel_h * c.kernel_w, seed + 1);
  const std::vector<float> bias = c.bias ? random_values(maps, seed + 2) : std::vector<float>{};
  GraphBuilder b;
  b.input("x", {c.batch, c.channels, c.height, c.width});
  b.weight("w", {c.channels, c.maps_per_group, c.kernel_h, c.kernel_w}, w);
  if (c.bias) b.weight("b", {maps}, bias);
  b.node("ConvTranspose", {"x", "w", c.bias ? "b" : ""}, {"y"},
         {{"group", attr_int(c.group)},
          {"strides", attr_ints({c.stride_h, c.stride_w})},
          {"dilations", attr_ints({c.dilation_h, c.dilation_w})},
          {"pads", attr_ints(c.pads)},
          {"output_padding", attr_ints(c.output_padding)}});
  b.output("y");
  const ir::Graph g = b.build();
  const Expected e = scatter(c, x, w, bias);
  ASSERT_EQ(g.type(g.outputs[0]).shape, e.shape);
  EXPECT_FLOATS_NEAR(floats_of(run(g, {x})), e.values, 1e-4);
}

TEST(ConvTranspose, StrideTwoRepeatsEachInputInABlock) {
  GraphBuilder b;
  b.input("x", {1, 1, 2, 2});
  b.weight("w", {1, 1, 2, 2}, {1, 1, 1, 1});
  b.node("ConvTranspose", {"x", "w"}, {"y"}, {{"strides", attr_ints({2, 2})}});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4}});
  EXPECT_FLOATS_NEAR(floats_of(y),
                     (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}), 1e-6);
}

TEST(ConvTranspose, StrideOneOverlapsAdd) {
  GraphBuilder b;
  b.input("x", {1, 1, 2, 2});
  b.weight("w", {1, 1, 2, 2}, {1, 1, 1, 1});
  b.node("ConvTranspose", {"x", "w"}, {"y"});
  b.output("y");
  const auto y = run(b.build(), {{1, 2, 3, 4}});
  EXPECT_FLOATS_NEAR(floats_of(y), (std::vector<float>{1, 3, 2, 4, 10, 6, 3, 7, 4}), 1e-6);
}

TEST(ConvTranspose, MatchesScatterOnStridesPadsAndBias) {
  check({2, 3, 3, 4, 2, 1, 3, 3, 2, 2, 1, 1, {1, 0, 1, 2}, {0, 0}, true}, 10);
}

TEST(ConvTranspose, MatchesScatterWithGroups) {
  check({1, 4, 3, 3, 3, 2, 2, 3, 1, 2, 1, 1, {0, 1, 0, 1}, {0, 1}, true}, 20);
}

TEST(ConvTranspose, MatchesScatterWithDilationsAndOutputPadding) {
  check({1, 2, 4, 3, 2, 1, 3, 2, 3, 2, 2, 3, {2, 1, 0, 1}, {2, 1}, false}, 30);
}

// output_shape and auto_pad only choose pads; each must equal the explicit-pads graph.
TEST(ConvTranspose, OutputShapeAndAutoPadResolveToPads) {
  const std::vector<float> x = random_values(9, 40), w = random_values(9, 41);
  auto run_with = [&](const std::map<std::string, ir::AttrValue>& attrs) {
    GraphBuilder b;
    b.input("x", {1, 1, 3, 3});
    b.weight("w", {1, 1, 3, 3}, w);
    std::map<std::string, ir::AttrValue> all = attrs;
    all["strides"] = attr_ints({2, 2});
    b.node("ConvTranspose", {"x", "w"}, {"y"}, all);
    b.output("y");
    return run(b.build(), {x});
  };
  // Full extent 2 * (3 - 1) + 3 = 7; asking for 6 leaves a total padding of 1, which goes
  // at the beginning unless auto_pad is SAME_UPPER.
  const auto begin = run_with({{"pads", attr_ints({1, 1, 0, 0})}});
  const auto end = run_with({{"pads", attr_ints({0, 0, 1, 1})}});
  ASSERT_EQ(begin.type.shape, (ir::Shape{1, 1, 6, 6}));
  EXPECT_FLOATS_NEAR(floats_of(run_with({{"output_shape", attr_ints({6, 6})}})), floats_of(begin),
                     1e-6);
  EXPECT_FLOATS_NEAR(floats_of(run_with({{"output_shape", attr_ints({1, 1, 6, 6})}})),
                     floats_of(begin), 1e-6);
  EXPECT_FLOATS_NEAR(floats_of(run_with({{"auto_pad", attr_string("SAME_LOWER")}})),
                     floats_of(begin), 1e-6);
  EXPECT_FLOATS_NEAR(floats_of(run_with({{"auto_pad", attr_string("SAME_UPPER")}})), floats_of(end),
                     1e-6);
}

}  // namespace
}  // namespace tlmc::test
