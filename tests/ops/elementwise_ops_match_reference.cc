// Element-wise float operators with numpy broadcasting against the reference interpreter,
// alone and fused after an anchor.
#include <gtest/gtest.h>

#include "ops/op_test_support.h"

namespace tlmc::test {
namespace {

TEST(Elementwise, UnaryOperators) {
  expect_matches_reference(R"(
tlmc: 1
name: unary_ops
inputs:
  x: {shape: [3, 37]}
weights:
  lo: {shape: [], data: [-0.25]}
  hi: {shape: [], data: [0.5]}
nodes:
  - {op: Relu, inputs: [x], outputs: [relu]}
  - {op: LeakyRelu, inputs: [x], outputs: [leaky], attrs: {alpha: 0.2}}
  - {op: Clip, inputs: [x, lo, hi], outputs: [clip]}
  - {op: Clip, inputs: [x, lo], outputs: [clip_min]}
  - {op: Sigmoid, inputs: [x], outputs: [sigmoid]}
  - {op: Tanh, inputs: [x], outputs: [tanh]}
  - {op: Erf, inputs: [x], outputs: [erf]}
  - {op: Exp, inputs: [x], outputs: [exp]}
  - {op: Sqrt, inputs: [relu], outputs: [sqrt]}
  - {op: Identity, inputs: [x], outputs: [same]}
  - {op: Neg, inputs: [x], outputs: [neg]}
  - {op: Abs, inputs: [x], outputs: [abs]}
  - {op: Log, inputs: [abs], outputs: [log]}
  - {op: Reciprocal, inputs: [x], outputs: [reciprocal]}
  - {op: Floor, inputs: [x], outputs: [floor]}
  - {op: HardSigmoid, inputs: [x], outputs: [hard_sigmoid], attrs: {alpha: 0.7, beta: 0.4}}
  - {op: HardSigmoid, inputs: [x], outputs: [hard_sigmoid_default]}
  - {op: HardSwish, inputs: [x], outputs: [hard_swish]}
outputs: [relu, leaky, clip, clip_min, sigmoid, tanh, erf, exp, sqrt, same, neg, abs, log,
          reciprocal, floor, hard_sigmoid, hard_sigmoid_default, hard_swish]
)");
}

// MobileNetV3's activations and a Max/Min clamp, fused into one kernel each (vectorised on
// SIMD targets): scaled so that every branch of the piecewise functions is taken.
TEST(Elementwise, NewActivationsFuseIntoChains) {
  expect_matches_reference(R"(
tlmc: 1
name: fused_activations
inputs:
  x: {shape: [5, 67]}
weights:
  four: {shape: [], data: [4.0]}
  lo: {shape: [1, 67], init: {uniform: [-3, -1]}}
  hi: {shape: [], data: [2.5]}
nodes:
  - {op: Mul, inputs: [x, four], outputs: [x4]}
  - {op: HardSwish, inputs: [x4], outputs: [hs]}
  - {op: Neg, inputs: [hs], outputs: [n]}
  - {op: HardSigmoid, inputs: [n], outputs: [hg]}
  - {op: Mul, inputs: [x4, hg], outputs: [m]}
  - {op: Max, inputs: [m, lo], outputs: [mx]}
  - {op: Min, inputs: [mx, hi], outputs: [y]}
outputs: [y]
)");
}

// Max and Min take any number of inputs (one is the identity), broadcasting all of them.
TEST(Elementwise, VariadicMaxAndMinBroadcast) {
  expect_matches_reference(R"(
tlmc: 1
name: variadic
inputs:
  a: {shape: [3, 1, 5]}
  b: {shape: [4, 1]}
  c: {shape: []}
  d: {shape: [2, 3, 4, 5]}
nodes:
  - {op: Max, inputs: [a, b, c, d], outputs: [max4]}
  - {op: Min, inputs: [d, a], outputs: [min2]}
  - {op: Max, inputs: [b], outputs: [max1]}
  - {op: Min, inputs: [a, b, c], outputs: [min3]}
outputs: [max4, min2, max1, min3]
)");
}

// The element-wise operators as epilogues of a matrix product and a convolution.
TEST(Elementwise, NewOperatorsAsAnchorEpilogues) {
  expect_matches_reference(R"(
tlmc: 1
name: epilogues
inputs:
  x: {shape: [6, 20]}
  img: {shape: [1, 3, 9, 9]}
weights:
  w: {shape: [20, 35], init: {uniform: [-1, 1]}}
  k: {shape: [8, 3, 3, 3], init: {uniform: [-1, 1]}}
  zero: {shape: [], data: [0.0]}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: HardSwish, inputs: [h], outputs: [y]}
  - {op: Conv, inputs: [img, k], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Greater, inputs: [c, zero], outputs: [positive]}
  - {op: Neg, inputs: [c], outputs: [negc]}
  - {op: Where, inputs: [positive, c, negc], outputs: [absc]}
outputs: [y, absc]
)");
}

TEST(Elementwise, BinaryOperatorsBroadcast) {
  expect_matches_reference(R"(
tlmc: 1
name: binary_ops
inputs:
  a: {shape: [3, 1, 5]}
  b: {shape: [4, 1]}
  c: {shape: []}
  d: {shape: [2, 3, 4, 5]}
weights:
  two: {shape: [1], data: [2.0]}
nodes:
  - {op: Add, inputs: [a, b], outputs: [add]}
  - {op: Sub, inputs: [b, a], outputs: [sub]}
  - {op: Mul, inputs: [a, c], outputs: [mul]}
  - {op: Div, inputs: [d, add], outputs: [div]}
  - {op: Pow, inputs: [a, two], outputs: [square]}
outputs: [add, sub, mul, div, square]
)");
}

// Extents no vector-width tile divides: tiles of whole vectors leave a remainder, the last
// one shifted back to end at the extent; the row reductions beside them divide exactly.
TEST(Elementwise, ExtentsNoVectorTileDivides) {
  expect_matches_reference(R"(
tlmc: 1
name: remainders
inputs:
  wide: {shape: [3, 1013]}
  tokens: {shape: [197, 50]}
  maps: {shape: [2, 5, 7, 7]}
weights:
  bias: {shape: [50], init: {uniform: [-1, 1]}, seed: 1}
nodes:
  - {op: Sigmoid, inputs: [wide], outputs: [sig]}
  - {op: Mul, inputs: [wide, sig], outputs: [silu]}
  - {op: Add, inputs: [tokens, bias], outputs: [biased]}
  - {op: Softmax, inputs: [biased], outputs: [probs], attrs: {axis: 0}}
  - {op: Relu, inputs: [maps], outputs: [relu]}
outputs: [silu, probs, relu]
)");
}

TEST(Elementwise, LongChainsFuseIntoOneKernel) {
  expect_matches_reference(R"(
tlmc: 1
name: gelu_chain
inputs:
  x: {shape: [7, 129]}
weights:
  sqrt2: {shape: [], data: [1.4142135623730951]}
  one: {shape: [], data: [1.0]}
  half: {shape: [], data: [0.5]}
nodes:
  - {op: Div, inputs: [x, sqrt2], outputs: [g0]}
  - {op: Erf, inputs: [g0], outputs: [g1]}
  - {op: Add, inputs: [g1, one], outputs: [g2]}
  - {op: Mul, inputs: [x, g2], outputs: [g3]}
  - {op: Mul, inputs: [g3, half], outputs: [y]}
outputs: [y]
)");
}

}  // namespace
}  // namespace tlmc::test
