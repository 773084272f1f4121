// Convolutions and pools whose activations are in tlmc's blocked layout, [N, C/B, spatial...,
// B] (attribute channel_block), and the element-wise operators between them, against the
// reference interpreter: dense, depthwise and grouped convolutions (whose groups cut across
// the blocks), strides, padding, 1-D and 2-D windows, and blocks of 4, 8 and 16.
#include <gtest/gtest.h>

#include "ops/op_test_support.h"

namespace tlmc::test {
namespace {

TEST(BlockedChannels, ConvolutionsOfEveryGroupingAndTheirEpilogues) {
  expect_matches_reference(R"(
tlmc: 1
name: blocked_convs
inputs:
  x: {shape: [1, 2, 9, 11, 8]}
weights:
  w: {shape: [24, 16, 3, 3], init: {uniform: [-1, 1]}, seed: 1}
  b: {shape: [24], init: {uniform: [-1, 1]}, seed: 2}
  shift: {shape: [1, 3, 1, 1, 8], init: {uniform: [-1, 1]}, seed: 3}
  dw: {shape: [24, 1, 3, 3], init: {uniform: [-1, 1]}, seed: 4}
  gw: {shape: [16, 12, 1, 1], init: {uniform: [-1, 1]}, seed: 5}
  pw: {shape: [32, 16, 1, 1], init: {uniform: [-1, 1]}, seed: 6}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [c], attrs: {kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1], channel_block: 8}}
  - {op: Relu, inputs: [c], outputs: [r]}
  - {op: Add, inputs: [r, shift], outputs: [s]}
  - {op: Conv, inputs: [s, dw], outputs: [d], attrs: {kernel_shape: [3, 3], group: 24, pads: [1, 1, 1, 1], channel_block: 8}}
  - {op: Conv, inputs: [d, gw], outputs: [g], attrs: {kernel_shape: [1, 1], group: 2, channel_block: 8}}
  - {op: Conv, inputs: [g, pw], outputs: [p], attrs: {kernel_shape: [1, 1], channel_block: 8}}
outputs: [s, p]
)");
}

TEST(BlockedChannels, StridedDepthwiseAndOneDimensionalWindows) {
  expect_matches_reference(R"(
tlmc: 1
name: blocked_windows
inputs:
  x: {shape: [2, 3, 13, 4]}
  y: {shape: [1, 2, 14, 14, 16]}
weights:
  w: {shape: [8, 12, 3], init: {uniform: [-1, 1]}, seed: 1}
  dw: {shape: [32, 1, 3, 3], init: {uniform: [-1, 1]}, seed: 2}
  db: {shape: [32], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [a], attrs: {kernel_shape: [3], dilations: [2], channel_block: 4}}
  - {op: Conv, inputs: [y, dw, db], outputs: [b], attrs: {kernel_shape: [3, 3], group: 32, strides: [2, 2], pads: [1, 1, 1, 1], channel_block: 16}}
outputs: [a, b]
)");
}

TEST(BlockedChannels, Pools) {
  expect_matches_reference(R"(
tlmc: 1
name: blocked_pools
inputs:
  x: {shape: [1, 3, 7, 10, 8]}
nodes:
  - {op: MaxPool, inputs: [x], outputs: [m], attrs: {kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1], channel_block: 8}}
  - {op: AveragePool, inputs: [x], outputs: [a], attrs: {kernel_shape: [3, 3], pads: [1, 1, 1, 1], channel_block: 8}}
  - {op: AveragePool, inputs: [x], outputs: [ai], attrs: {kernel_shape: [2, 3], strides: [2, 2], count_include_pad: 1, pads: [0, 1, 1, 1], channel_block: 8}}
  - {op: GlobalAveragePool, inputs: [x], outputs: [g], attrs: {channel_block: 8}}
outputs: [m, a, ai, g]
)");
}

}  // namespace
}  // namespace tlmc::test
