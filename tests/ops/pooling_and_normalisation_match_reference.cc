// Pooling, normalisations, Softmax and reductions against the reference interpreter.
#include <gtest/gtest.h>

#include "ops/op_test_support.h"

namespace tlmc::test {
namespace {

TEST(Pooling, MaxPoolWindowsPadsCeilAndDilation) {
  expect_matches_reference(R"(
tlmc: 1
name: maxpool_forms
inputs:
  x: {shape: [2, 3, 13, 11]}
nodes:
  - {op: MaxPool, inputs: [x], outputs: [p2], attrs: {kernel_shape: [2, 2], strides: [2, 2]}}
  - {op: MaxPool, inputs: [x], outputs: [p3], attrs: {kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1]}}
  - {op: MaxPool, inputs: [x], outputs: [ceil], attrs: {kernel_shape: [3, 2], strides: [2, 2], ceil_mode: 1}}
  - {op: MaxPool, inputs: [x], outputs: [dil], attrs: {kernel_shape: [2, 2], dilations: [2, 2]}}
  - {op: MaxPool, inputs: [x], outputs: [same], attrs: {kernel_shape: [3, 3], auto_pad: SAME_UPPER}}
outputs: [p2, p3, ceil, dil, same]
)");
}

TEST(Pooling, AveragePoolCountsPadsBothWays) {
  expect_matches_reference(R"(
tlmc: 1
name: avgpool_forms
inputs:
  x: {shape: [1, 4, 9, 10]}
nodes:
  - {op: AveragePool, inputs: [x], outputs: [exclude], attrs: {kernel_shape: [3, 3], pads: [1, 1, 1, 1], strides: [2, 2]}}
  - {op: AveragePool, inputs: [x], outputs: [include], attrs: {kernel_shape: [3, 3], pads: [1, 1, 1, 1], count_include_pad: 1}}
  - {op: AveragePool, inputs: [x], outputs: [ceil], attrs: {kernel_shape: [2, 3], strides: [2, 2], ceil_mode: 1}}
  - {op: GlobalAveragePool, inputs: [x], outputs: [global]}
outputs: [exclude, include, ceil, global]
)");
}

TEST(Normalisation, BatchAndLayerNormalization) {
  expect_matches_reference(R"(
tlmc: 1
name: norms
inputs:
  x: {shape: [2, 5, 7, 3]}
  t: {shape: [3, 17, 24]}
weights:
  s: {shape: [5], init: {uniform: [0.5, 1.5]}}
  b: {shape: [5], init: {uniform: [-1, 1]}}
  m: {shape: [5], init: {uniform: [-1, 1]}}
  v: {shape: [5], init: {uniform: [0.5, 1.5]}}
  g: {shape: [24], init: {uniform: [0.5, 1.5]}}
  beta: {shape: [24], init: {uniform: [-1, 1]}}
  g2: {shape: [17, 24], init: {uniform: [0.5, 1.5]}}
nodes:
  - {op: BatchNormalization, inputs: [x, s, b, m, v], outputs: [bn], attrs: {epsilon: 0.01}}
  - {op: LayerNormalization, inputs: [t, g, beta], outputs: [ln]}
  - {op: LayerNormalization, inputs: [t, g2], outputs: [ln2], attrs: {axis: 1, epsilon: 0.001}}
outputs: [bn, ln, ln2]
)");
}

TEST(Normalisation, SoftmaxOverEveryAxis) {
  expect_matches_reference(R"(
tlmc: 1
name: softmaxes
inputs:
  x: {shape: [3, 7, 33]}
nodes:
  - {op: Softmax, inputs: [x], outputs: [last]}
  - {op: Softmax, inputs: [x], outputs: [middle], attrs: {axis: 1}}
  - {op: Softmax, inputs: [x], outputs: [first], attrs: {axis: 0}}
outputs: [last, middle, first]
)");
}

// Rows longer than a tile's local buffer holds (40,000 floats: the exponentials are computed
// whole), and attention's shape, whose tiles once led a random point to a dead end.
TEST(Normalisation, SoftmaxOfLongRowsAndOfAttentionScores) {
  expect_matches_reference(R"(
tlmc: 1
name: softmax_rows
inputs:
  x: {shape: [2, 40000]}
  s: {shape: [1, 8, 128, 128]}
nodes:
  - {op: Softmax, inputs: [x], outputs: [long]}
  - {op: Softmax, inputs: [s], outputs: [scores]}
outputs: [long, scores]
)");
}

TEST(Reductions, ReduceMeanAndSumAxesAndKeepdims) {
  expect_matches_reference(R"(
tlmc: 1
name: reductions
inputs:
  x: {shape: [4, 5, 6]}
weights:
  axes: {shape: [2], dtype: int64, data: [0, -1]}
nodes:
  - {op: ReduceMean, inputs: [x], outputs: [mean_last], attrs: {axes: [-1]}}
  - {op: ReduceMean, inputs: [x], outputs: [mean_all], attrs: {keepdims: 0}}
  - {op: ReduceMean, inputs: [x], outputs: [mean_mid], attrs: {axes: [1], keepdims: 0}}
  - {op: ReduceSum, inputs: [x, axes], outputs: [sum_outer]}
  - {op: ReduceSum, inputs: [x], outputs: [sum_all], attrs: {keepdims: 0}}
outputs: [mean_last, mean_all, mean_mid, sum_outer, sum_all]
)");
}

}  // namespace
}  // namespace tlmc::test
