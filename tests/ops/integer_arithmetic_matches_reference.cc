// Add, Sub, Mul, Div, Neg, Abs, Max and Min on int64 and int32 tensors (the shape arithmetic
// of exported models, when it is not folded) against the reference interpreter.
#include <gtest/gtest.h>

#include "ops/op_test_support.h"

namespace tlmc::test {
namespace {

// Inputs are drawn from [0, 4): divisions by zero happen, and give 0 on both sides.
TEST(IntegerArithmetic, Int64OperatorsBroadcast) {
  expect_matches_reference(R"(
tlmc: 1
name: int64_ops
inputs:
  a: {shape: [3, 1, 5], dtype: int64}
  b: {shape: [4, 1], dtype: int64}
  c: {shape: [], dtype: int64}
weights:
  seven: {shape: [1], dtype: int64, data: [-7]}
nodes:
  - {op: Add, inputs: [a, b], outputs: [add]}
  - {op: Sub, inputs: [b, a], outputs: [sub]}
  - {op: Mul, inputs: [sub, seven], outputs: [mul]}
  - {op: Div, inputs: [mul, c], outputs: [div_by_input]}
  - {op: Div, inputs: [mul, seven], outputs: [div_by_const]}
  - {op: Neg, inputs: [mul], outputs: [neg]}
  - {op: Abs, inputs: [mul], outputs: [abs]}
  - {op: Max, inputs: [a, b, seven], outputs: [max]}
  - {op: Min, inputs: [mul, c], outputs: [min]}
outputs: [add, sub, mul, div_by_input, div_by_const, neg, abs, max, min]
)");
}

TEST(IntegerArithmetic, Int32Operators) {
  expect_matches_reference(R"(
tlmc: 1
name: int32_ops
inputs:
  a: {shape: [2, 9], dtype: int32}
  b: {shape: [9], dtype: int32}
weights:
  m: {shape: [], dtype: int32, data: [-3]}
nodes:
  - {op: Sub, inputs: [a, b], outputs: [d]}
  - {op: Mul, inputs: [d, m], outputs: [p]}
  - {op: Div, inputs: [p, b], outputs: [q]}
  - {op: Abs, inputs: [q], outputs: [y]}
  - {op: Less, inputs: [d, b], outputs: [lt]}
outputs: [p, y, lt]
)");
}

// The one overflowing quotient, min / -1, wraps in generated code as in the reference; it
// used to trap (SIGFPE). The dividend is computed from an input so that it is not folded.
TEST(IntegerArithmetic, MinDividedByMinusOneWraps) {
  expect_matches_reference(R"(
tlmc: 1
name: div_overflow
inputs:
  x32: {shape: [3], dtype: int32}
  x64: {shape: [3], dtype: int64}
weights:
  min32: {shape: [3], dtype: int32, data: [-2147483648, -2147483648, 7]}
  min64: {shape: [3], dtype: int64, data: [-9223372036854775808, -9223372036854775808, 7]}
  zero32: {shape: [], dtype: int32, data: [0]}
  zero64: {shape: [], dtype: int64, data: [0]}
  by32: {shape: [3], dtype: int32, data: [-1, 1, -1]}
  by64: {shape: [3], dtype: int64, data: [-1, 1, -1]}
nodes:
  - {op: Mul, inputs: [x32, zero32], outputs: [z32]}
  - {op: Sub, inputs: [min32, z32], outputs: [a32]}
  - {op: Div, inputs: [a32, by32], outputs: [q32]}
  - {op: Mul, inputs: [x64, zero64], outputs: [z64]}
  - {op: Sub, inputs: [min64, z64], outputs: [a64]}
  - {op: Div, inputs: [a64, by64], outputs: [q64]}
outputs: [q32, q64]
)");
}

}  // namespace
}  // namespace tlmc::test
