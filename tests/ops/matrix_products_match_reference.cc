// MatMul and Gemm against the reference interpreter, on odd shapes.
#include <gtest/gtest.h>

#include "ops/op_test_support.h"

namespace tlmc::test {
namespace {

TEST(MatrixProducts, MatMulOnPrimeAndUnitShapes) {
  expect_matches_reference(R"(
tlmc: 1
name: matmul_odd
inputs:
  a: {shape: [7, 13]}
  b: {shape: [13, 5]}
  one_a: {shape: [1, 1]}
  one_b: {shape: [1, 1]}
  big_a: {shape: [37, 96]}
  big_b: {shape: [96, 130]}
nodes:
  - {op: MatMul, inputs: [a, b], outputs: [ab]}
  - {op: MatMul, inputs: [one_a, one_b], outputs: [ones]}
  - {op: MatMul, inputs: [big_a, big_b], outputs: [big]}
outputs: [ab, ones, big]
)");
}

TEST(MatrixProducts, MatMulBatchedBroadcastAndVectors) {
  expect_matches_reference(R"(
tlmc: 1
name: matmul_batched
inputs:
  a: {shape: [3, 5, 7]}
  b: {shape: [7, 11]}
  c: {shape: [2, 1, 4, 6]}
  d: {shape: [3, 6, 5]}
  v: {shape: [13]}
  m: {shape: [13, 7]}
  n: {shape: [5, 13]}
nodes:
  - {op: MatMul, inputs: [a, b], outputs: [ab]}
  - {op: MatMul, inputs: [c, d], outputs: [cd]}
  - {op: MatMul, inputs: [v, m], outputs: [vm]}
  - {op: MatMul, inputs: [n, v], outputs: [nv]}
outputs: [ab, cd, vm, nv]
)");
}

TEST(MatrixProducts, GemmTransposesScalesAndBroadcastsC) {
  expect_matches_reference(R"(
tlmc: 1
name: gemm_forms
inputs:
  a: {shape: [6, 9]}
  at: {shape: [9, 6]}
  b: {shape: [9, 17]}
  bt: {shape: [17, 9]}
  c_row: {shape: [17]}
  c_col: {shape: [6, 1]}
  c_scalar: {shape: []}
nodes:
  - {op: Gemm, inputs: [a, b], outputs: [plain]}
  - {op: Gemm, inputs: [at, b, c_row], outputs: [ta], attrs: {transA: 1}}
  - {op: Gemm, inputs: [a, bt, c_col], outputs: [tb], attrs: {transB: 1, alpha: 0.5, beta: 2.0}}
  - {op: Gemm, inputs: [at, bt, c_scalar], outputs: [both], attrs: {transA: 1, transB: 1, beta: -1.0}}
outputs: [plain, ta, tb, both]
)");
}

TEST(MatrixProducts, MatMulWithBiasAndActivationEpilogue) {
  expect_matches_reference(R"(
tlmc: 1
name: mm_epilogue
inputs:
  x: {shape: [19, 32]}
weights:
  w: {shape: [32, 48], init: {uniform: [-1, 1]}}
  b: {shape: [48], init: {uniform: [-1, 1]}}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: Add, inputs: [h, b], outputs: [hb]}
  - {op: Tanh, inputs: [hb], outputs: [y]}
outputs: [y]
)");
}

// Constant operands, which the layout spaces may pack in the order the loops read them:
// on either side, batched, transposed by Gemm, and one weight read by two products of
// different shapes (two kernels, two packings) that is also an output in its own layout.
TEST(MatrixProducts, ConstantOperandsPackedOrNot) {
  expect_matches_reference(R"(
tlmc: 1
name: mm_constants
inputs:
  x: {shape: [13, 24]}
  x2: {shape: [3, 24]}
  y: {shape: [10, 21]}
  z: {shape: [4, 7, 9]}
weights:
  w: {shape: [24, 40], init: {uniform: [-1, 1]}, seed: 1}
  left: {shape: [6, 10], init: {uniform: [-1, 1]}, seed: 2}
  wb: {shape: [4, 9, 11], init: {uniform: [-1, 1]}, seed: 3}
  wt: {shape: [17, 24], init: {uniform: [-1, 1]}, seed: 4}
  c: {shape: [17], init: {uniform: [-1, 1]}, seed: 5}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [xw]}
  - {op: MatMul, inputs: [x2, w], outputs: [x2w]}
  - {op: MatMul, inputs: [left, y], outputs: [ly]}
  - {op: MatMul, inputs: [z, wb], outputs: [zw]}
  - {op: Gemm, inputs: [x, wt, c], outputs: [g], attrs: {transB: 1}}
outputs: [xw, x2w, ly, zw, g, w]
)");
}

// Extents no vector-width tile divides (a vocabulary of 50257 is 29 x 1733; 197 tokens, 1000
// classes), whose tiles leave a remainder: the last tile is shifted back to end at the
// extent. Constant weights are packed with that shift; the fused epilogue (bias, the
// tanh-form GELU) is computed twice where tiles overlap, and stored once more with the same
// value.
TEST(MatrixProducts, ExtentsNoVectorTileDivides) {
  expect_matches_reference(R"(
tlmc: 1
name: mm_remainders
inputs:
  tokens: {shape: [5, 64]}
  seq: {shape: [197, 24]}
  keys: {shape: [24, 197]}
  feats: {shape: [3, 40]}
weights:
  head: {shape: [64, 1013], init: {uniform: [-1, 1]}, seed: 1}
  fc: {shape: [40, 1000], init: {uniform: [-1, 1]}, seed: 2}
  fc_bias: {shape: [1000], init: {uniform: [-1, 1]}, seed: 3}
  half: {shape: [], data: [0.5]}
  one: {shape: [], data: [1.0]}
  k: {shape: [], data: [0.044715]}
  s: {shape: [], data: [0.7978846]}
  three: {shape: [], data: [3.0]}
nodes:
  - {op: MatMul, inputs: [tokens, head], outputs: [logits]}
  - {op: MatMul, inputs: [seq, keys], outputs: [scores]}
  - {op: MatMul, inputs: [feats, fc], outputs: [h]}
  - {op: Add, inputs: [h, fc_bias], outputs: [z]}
  - {op: Pow, inputs: [z, three], outputs: [z3]}
  - {op: Mul, inputs: [z3, k], outputs: [kz3]}
  - {op: Add, inputs: [z, kz3], outputs: [inner]}
  - {op: Mul, inputs: [inner, s], outputs: [arg]}
  - {op: Tanh, inputs: [arg], outputs: [t]}
  - {op: Add, inputs: [t, one], outputs: [t1]}
  - {op: Mul, inputs: [z, t1], outputs: [zt]}
  - {op: Mul, inputs: [zt, half], outputs: [gelu]}
outputs: [logits, scores, gelu]
)");
}

}  // namespace
}  // namespace tlmc::test
