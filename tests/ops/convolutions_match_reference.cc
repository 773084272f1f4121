// Conv and ConvTranspose against the reference interpreter: padding, strides, dilations,
// groups (depthwise too), auto_pad, with and without bias, odd sizes.
#include <gtest/gtest.h>

#include "ops/op_test_support.h"

namespace tlmc::test {
namespace {

TEST(Convolutions, ConvPaddingStrideDilation) {
  expect_matches_reference(R"(
tlmc: 1
name: conv_geometry
inputs:
  x: {shape: [2, 3, 17, 19]}
weights:
  w3: {shape: [8, 3, 3, 3], init: {uniform: [-1, 1]}}
  b3: {shape: [8], init: {uniform: [-1, 1]}}
  w1: {shape: [5, 3, 1, 1], init: {uniform: [-1, 1]}}
  w5: {shape: [4, 3, 5, 2], init: {uniform: [-1, 1]}}
nodes:
  - {op: Conv, inputs: [x, w3, b3], outputs: [same], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Conv, inputs: [x, w3], outputs: [strided], attrs: {strides: [2, 2], pads: [1, 0, 2, 1]}}
  - {op: Conv, inputs: [x, w3], outputs: [dilated], attrs: {dilations: [2, 3]}}
  - {op: Conv, inputs: [x, w1], outputs: [pointwise]}
  - {op: Conv, inputs: [x, w5], outputs: [upper], attrs: {auto_pad: SAME_UPPER, strides: [2, 1]}}
  - {op: Conv, inputs: [x, w5], outputs: [lower], attrs: {auto_pad: SAME_LOWER}}
outputs: [same, strided, dilated, pointwise, upper, lower]
)");
}

TEST(Convolutions, GroupedAndDepthwiseConv) {
  expect_matches_reference(R"(
tlmc: 1
name: conv_groups
inputs:
  x: {shape: [1, 6, 11, 13]}
weights:
  wg: {shape: [4, 3, 3, 3], init: {uniform: [-1, 1]}}
  wd: {shape: [6, 1, 3, 3], init: {uniform: [-1, 1]}}
  bd: {shape: [6], init: {uniform: [-1, 1]}}
  wm: {shape: [12, 1, 3, 3], init: {uniform: [-1, 1]}}
nodes:
  - {op: Conv, inputs: [x, wg], outputs: [grouped], attrs: {group: 2, pads: [1, 1, 1, 1]}}
  - {op: Conv, inputs: [x, wd, bd], outputs: [depthwise], attrs: {group: 6, pads: [1, 1, 1, 1], strides: [2, 2]}}
  - {op: Conv, inputs: [x, wm], outputs: [multiplier], attrs: {group: 6}}
outputs: [grouped, depthwise, multiplier]
)");
}

TEST(Convolutions, ConvWithFusedEpilogue) {
  expect_matches_reference(R"(
tlmc: 1
name: conv_epilogue
inputs:
  x: {shape: [1, 8, 14, 14]}
  skip: {shape: [1, 16, 14, 14]}
weights:
  w: {shape: [16, 8, 3, 3], init: {uniform: [-0.5, 0.5]}}
  scale: {shape: [16], init: {uniform: [0.5, 1.5]}}
  bias: {shape: [16], init: {uniform: [-0.5, 0.5]}}
  mean: {shape: [16], init: {uniform: [-0.5, 0.5]}}
  var: {shape: [16], init: {uniform: [0.5, 1.5]}}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
  - {op: BatchNormalization, inputs: [c, scale, bias, mean, var], outputs: [n], attrs: {epsilon: 0.001}}
  - {op: Add, inputs: [n, skip], outputs: [r]}
  - {op: Relu, inputs: [r], outputs: [y]}
outputs: [y]
)");
}

TEST(Convolutions, ConvTransposeStridesPadsGroups) {
  expect_matches_reference(R"(
tlmc: 1
name: conv_transpose
inputs:
  x: {shape: [1, 4, 5, 7]}
weights:
  w: {shape: [4, 3, 3, 3], init: {uniform: [-1, 1]}}
  b: {shape: [3], init: {uniform: [-1, 1]}}
  wg: {shape: [4, 2, 4, 4], init: {uniform: [-1, 1]}}
nodes:
  - {op: ConvTranspose, inputs: [x, w, b], outputs: [plain]}
  - {op: ConvTranspose, inputs: [x, w], outputs: [strided], attrs: {strides: [2, 2], pads: [1, 1, 1, 1], output_padding: [1, 1]}}
  - {op: ConvTranspose, inputs: [x, wg], outputs: [grouped], attrs: {group: 2, strides: [2, 3], dilations: [1, 2]}}
outputs: [plain, strided, grouped]
)");
}

// Output rows shorter than half a vector: the -O0 rule computes channels-last, vectorised
// over output channels (scheduler/lowering_choices.h).
TEST(Convolutions, ShortRowsVectoriseOverOutputChannels) {
  expect_matches_reference(R"(
tlmc: 1
name: conv_short_rows
inputs:
  x: {shape: [1, 24, 7, 7]}
  skip: {shape: [1, 48, 7, 7]}
weights:
  w: {shape: [48, 24, 3, 3], init: {uniform: [-0.3, 0.3]}}
  b: {shape: [48], init: {uniform: [-1, 1]}}
  w1: {shape: [40, 24, 1, 1], init: {uniform: [-0.3, 0.3]}}
  ws: {shape: [32, 24, 3, 3], init: {uniform: [-0.3, 0.3]}}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Add, inputs: [c, skip], outputs: [r]}
  - {op: Relu, inputs: [r], outputs: [y]}
  - {op: Conv, inputs: [x, w1], outputs: [pointwise]}
  - {op: Conv, inputs: [x, ws], outputs: [strided], attrs: {strides: [2, 2], pads: [0, 1, 1, 0]}}
outputs: [y, pointwise, strided]
)");
}

// Pointwise convolutions and their epilogue see one merged spatial row in the model's
// layout (scheduler/lowering_choices.h): residuals, operands over the whole image, groups,
// three spatial dimensions, odd extents.
TEST(Convolutions, PointwiseConvolutionsOverOneSpatialRow) {
  expect_matches_reference(R"(
tlmc: 1
name: conv_pointwise
inputs:
  x: {shape: [2, 6, 9, 11]}
  skip: {shape: [2, 10, 9, 11]}
  x3: {shape: [1, 4, 3, 5, 7]}
weights:
  w: {shape: [10, 6, 1, 1], init: {uniform: [-0.5, 0.5]}}
  b: {shape: [10], init: {uniform: [-1, 1]}}
  image: {shape: [9, 11], init: {uniform: [-1, 1]}}
  wg: {shape: [4, 3, 1, 1], init: {uniform: [-1, 1]}}
  w3: {shape: [5, 4, 1, 1, 1], init: {uniform: [-1, 1]}}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [c]}
  - {op: Add, inputs: [c, skip], outputs: [r]}
  - {op: Relu, inputs: [r], outputs: [y]}
  - {op: Conv, inputs: [x, w], outputs: [c2], attrs: {kernel_shape: [1, 1], pads: [0, 0, 0, 0]}}
  - {op: Mul, inputs: [c2, image], outputs: [scaled]}
  - {op: Conv, inputs: [x, wg], outputs: [grouped], attrs: {group: 2}}
  - {op: Conv, inputs: [x3, w3], outputs: [c3]}
  - {op: Sigmoid, inputs: [c3], outputs: [s3]}
outputs: [y, scaled, grouped, s3]
)");
}

TEST(Convolutions, OneAndThreeSpatialDimensions) {
  expect_matches_reference(R"(
tlmc: 1
name: conv_ranks
inputs:
  x1: {shape: [1, 3, 23]}
  x3: {shape: [1, 2, 5, 6, 7]}
weights:
  w1: {shape: [4, 3, 3], init: {uniform: [-1, 1]}}
  w3: {shape: [3, 2, 3, 3, 3], init: {uniform: [-1, 1]}}
nodes:
  - {op: Conv, inputs: [x1, w1], outputs: [c1], attrs: {pads: [1, 1], strides: [2]}}
  - {op: Conv, inputs: [x3, w3], outputs: [c3], attrs: {pads: [1, 1, 1, 1, 1, 1]}}
  - {op: MaxPool, inputs: [x3], outputs: [p3], attrs: {kernel_shape: [2, 2, 2], strides: [2, 2, 2]}}
  - {op: AveragePool, inputs: [x1], outputs: [a1], attrs: {kernel_shape: [3], pads: [1, 1]}}
outputs: [c1, c3, p3, a1]
)");
}

}  // namespace
}  // namespace tlmc::test
