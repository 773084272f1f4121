// Element-wise operators with numpy broadcasting against the reference interpreter.
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
outputs: [relu, leaky, clip, clip_min, sigmoid, tanh, erf, exp, sqrt, same]
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
