// Matrix products with --precision bf16 (operands rounded to bfloat16, accumulated in
// float32), on odd shapes, weights and activations as operands, with epilogues whose result
// another product reads in bfloat16, against the reference interpreter.
#include <gtest/gtest.h>

#include "ops/op_test_support.h"

namespace tlmc::test {
namespace {

TEST(Bf16Products, MatMulOfWeightsAndActivationsOnOddShapes) {
  expect_bf16_matches_reference(R"(
tlmc: 1
name: bf16_matmul
inputs:
  a: {shape: [7, 13]}
  b: {shape: [13, 5]}
  big: {shape: [37, 96]}
  batched: {shape: [3, 5, 7]}
weights:
  w: {shape: [96, 130], init: {uniform: [-1, 1]}, seed: 3}
  v: {shape: [7, 11], init: {uniform: [-1, 1]}, seed: 4}
nodes:
  - {op: MatMul, inputs: [a, b], outputs: [ab]}
  - {op: MatMul, inputs: [big, w], outputs: [bw]}
  - {op: MatMul, inputs: [batched, v], outputs: [bv]}
outputs: [ab, bw, bv]
)");
}

// The activation between the products is rounded by the kernel that computes it.
TEST(Bf16Products, GemmChainWithEpilogues) {
  expect_bf16_matches_reference(R"(
tlmc: 1
name: bf16_gemm
inputs:
  x: {shape: [5, 24]}
weights:
  w1: {shape: [33, 24], init: {uniform: [-1, 1]}, seed: 5}
  b1: {shape: [33], init: {uniform: [-1, 1]}, seed: 6}
  w2: {shape: [33, 17], init: {uniform: [-1, 1]}, seed: 7}
nodes:
  - {op: Gemm, inputs: [x, w1, b1], outputs: [h], attrs: {transB: 1, alpha: 0.5}}
  - {op: Relu, inputs: [h], outputs: [r]}
  - {op: MatMul, inputs: [r, w2], outputs: [y]}
  - {op: Softmax, inputs: [y], outputs: [p]}
outputs: [p, h]
)");
}

// MobileNet's inverted residual on odd sizes: depthwise convolutions read their input in
// bfloat16 (widened into their padded copy, or by each load where nothing is padded), of 24
// channels (a vector and a half) and 20, at stride 1 and 2, with and without padding.
TEST(Bf16Products, DepthwiseConvolutionsReadBfloat16) {
  expect_bf16_matches_reference(R"(
tlmc: 1
name: bf16_depthwise
inputs:
  x: {shape: [1, 16, 9, 11]}
weights:
  e: {shape: [24, 16, 1, 1], init: {uniform: [-1, 1]}, seed: 11}
  d1: {shape: [24, 1, 3, 3], init: {uniform: [-1, 1]}, seed: 12}
  d2: {shape: [24, 1, 3, 3], init: {uniform: [-1, 1]}, seed: 13}
  p: {shape: [20, 24, 1, 1], init: {uniform: [-1, 1]}, seed: 14}
  d3: {shape: [20, 1, 2, 2], init: {uniform: [-1, 1]}, seed: 15}
  b: {shape: [20], init: {uniform: [-1, 1]}, seed: 16}
nodes:
  - {op: Conv, inputs: [x, e], outputs: [h]}
  - {op: Relu, inputs: [h], outputs: [hc]}
  - {op: Conv, inputs: [hc, d1], outputs: [a], attrs: {group: 24, pads: [1, 1, 1, 1]}}
  - {op: Conv, inputs: [a, d2], outputs: [s], attrs: {group: 24, pads: [1, 1, 1, 1], strides: [2, 2]}}
  - {op: Relu, inputs: [s], outputs: [sr]}
  - {op: Conv, inputs: [sr, p], outputs: [q]}
  - {op: Conv, inputs: [q, d3, b], outputs: [y], attrs: {group: 20}}
outputs: [y, a]
)");
}

// Weights of `n` values that bfloat16 holds exactly (-1, -0.5, 0, 0.5, 1 in turn), so that a
// product of small integers stays exact in bfloat16 and the check against the float32 model
// is exact too.
std::string exact_weights(int n) {
  static const char* const kValues[] = {"-1", "-0.5", "0", "0.5", "1"};
  std::string out = "[";
  for (int i = 0; i < n; ++i) out += std::string(i ? ", " : "") + kValues[(i * 7 + i / 5) % 5];
  return out + "]";
}

// Residual blocks with --bf16-storage shared: each block's input is stored in bfloat16 alone,
// which its first convolution reads and its closing sum reads widened (in the sum's kernel);
// the graph's input and output stay float32.
TEST(Bf16Products, SharedStorageFeedsResidualSumsTheRoundedBlockInput) {
  const std::string w = exact_weights(64);
  expect_bf16_matches_reference(R"(
tlmc: 1
name: bf16_shared
inputs:
  x: {shape: [1, 8, 5, 7]}
weights:
  a1: {shape: [8, 8, 1, 1], data: )" +
                                    w + R"(}
  a2: {shape: [8, 8, 1, 1], data: )" +
                                    w + R"(}
  b1: {shape: [8, 8, 1, 1], data: )" +
                                    w + R"(}
nodes:
  - {op: Conv, inputs: [x, a1], outputs: [h]}
  - {op: Relu, inputs: [h], outputs: [hr]}
  - {op: Conv, inputs: [hr, a2], outputs: [g]}
  - {op: Add, inputs: [g, x], outputs: [s1]}
  - {op: Relu, inputs: [s1], outputs: [t]}
  - {op: Conv, inputs: [t, b1], outputs: [k]}
  - {op: Add, inputs: [k, t], outputs: [s2]}
  - {op: Relu, inputs: [s2], outputs: [y]}
outputs: [y]
)",
                                frontend::PrecisionOptions::Storage::Shared);
}

// Five products deep, with Erf and Tanh (tlmc's own) between: the library's float32 activations
// differ from the reference's double ones by ulps, which moves some across a bfloat16
// rounding boundary; the check allows that and no more.
TEST(Bf16Products, ADeepChainStaysWithinOneRounding) {
  expect_bf16_matches_reference(R"(
tlmc: 1
name: bf16_deep
inputs:
  x: {shape: [6, 40]}
weights:
  w1: {shape: [40, 40], init: {uniform: [-0.3, 0.3]}, seed: 11}
  w2: {shape: [40, 40], init: {uniform: [-0.3, 0.3]}, seed: 12}
  w3: {shape: [40, 40], init: {uniform: [-0.3, 0.3]}, seed: 13}
  w4: {shape: [40, 40], init: {uniform: [-0.3, 0.3]}, seed: 14}
  w5: {shape: [40, 24], init: {uniform: [-0.3, 0.3]}, seed: 15}
nodes:
  - {op: MatMul, inputs: [x, w1], outputs: [h1]}
  - {op: Erf, inputs: [h1], outputs: [g1]}
  - {op: MatMul, inputs: [g1, w2], outputs: [h2]}
  - {op: Erf, inputs: [h2], outputs: [g2]}
  - {op: MatMul, inputs: [g2, w3], outputs: [h3]}
  - {op: Tanh, inputs: [h3], outputs: [g3]}
  - {op: MatMul, inputs: [g3, w4], outputs: [h4]}
  - {op: Erf, inputs: [h4], outputs: [g4]}
  - {op: MatMul, inputs: [g4, w5], outputs: [y]}
outputs: [y]
)");
}

}  // namespace
}  // namespace tlmc::test
