// Comparisons (bool results), Not/And/Or, Where and Cast against the reference interpreter:
// float, int64 and bool tensors, broadcasting, and chains mixing the dtypes in one kernel.
#include <gtest/gtest.h>

#include "ops/op_test_support.h"

namespace tlmc::test {
namespace {

// Integer inputs are drawn from [0, 4): ties happen, so < and <= are told apart.
TEST(ComparisonOps, FloatAndIntegerInputsBroadcast) {
  expect_matches_reference(R"(
tlmc: 1
name: comparisons
inputs:
  x: {shape: [3, 37]}
  y: {shape: [1, 37]}
  i: {shape: [3, 1], dtype: int64}
  j: {shape: [37], dtype: int64}
  b: {shape: [3, 37], dtype: bool}
  c: {shape: [37], dtype: bool}
weights:
  half: {shape: [], data: [0.5]}
nodes:
  - {op: Less, inputs: [x, y], outputs: [lt]}
  - {op: Greater, inputs: [x, half], outputs: [gt]}
  - {op: LessOrEqual, inputs: [i, j], outputs: [le]}
  - {op: GreaterOrEqual, inputs: [j, i], outputs: [ge]}
  - {op: Equal, inputs: [i, j], outputs: [eq]}
  - {op: Equal, inputs: [x, x], outputs: [eq_self]}
  - {op: Equal, inputs: [b, c], outputs: [eq_bool]}
  - {op: Greater, inputs: [i, j], outputs: [gt_int]}
  - {op: Less, inputs: [j, i], outputs: [lt_int]}
outputs: [lt, gt, le, ge, eq, eq_self, eq_bool, gt_int, lt_int]
)");
}

TEST(LogicOps, NotAndOrOnBoolTensors) {
  expect_matches_reference(R"(
tlmc: 1
name: logic
inputs:
  a: {shape: [4, 1, 5], dtype: bool}
  b: {shape: [3, 5], dtype: bool}
nodes:
  - {op: Not, inputs: [a], outputs: [na]}
  - {op: And, inputs: [na, b], outputs: [and]}
  - {op: Or, inputs: [a, b], outputs: [or]}
  - {op: Not, inputs: [or], outputs: [nor]}
outputs: [na, and, or, nor]
)");
}

// Where over three broadcast shapes, on float, int64 and bool values; the condition computed
// in the same kernel from floats (a blend on SIMD targets) or read as a bool tensor.
TEST(WhereOp, SelectsOverBroadcastInputsOfAnyDtype) {
  expect_matches_reference(R"(
tlmc: 1
name: where
inputs:
  x: {shape: [2, 3, 17]}
  y: {shape: [17]}
  cond: {shape: [3, 1], dtype: bool}
  i: {shape: [2, 1, 17], dtype: int64}
  j: {shape: [], dtype: int64}
  p: {shape: [3, 17], dtype: bool}
weights:
  minus_inf: {shape: [], data: [-.inf]}
nodes:
  - {op: Where, inputs: [cond, x, y], outputs: [w]}
  - {op: Where, inputs: [cond, i, j], outputs: [wi]}
  - {op: Where, inputs: [cond, p, cond], outputs: [wb]}
  - {op: Less, inputs: [x, y], outputs: [lt]}
  - {op: Where, inputs: [lt, x, minus_inf], outputs: [masked]}
  - {op: Relu, inputs: [masked], outputs: [masked_relu]}
  - {op: Equal, inputs: [i, j], outputs: [is_j]}
  - {op: Where, inputs: [is_j, x, y], outputs: [picked]}
outputs: [w, wi, wb, masked_relu, picked]
)");
}

// GPT-2's causal mask: a bool weight sliced to the sequence, then Where over the scores.
TEST(WhereOp, CausalMaskFromABoolWeight) {
  expect_matches_reference(R"(
tlmc: 1
name: causal_mask
inputs:
  scores: {shape: [1, 2, 5, 5]}
weights:
  bias: {shape: [1, 1, 8, 8], dtype: bool, data: [
    1, 0, 0, 0, 0, 0, 0, 0,  1, 1, 0, 0, 0, 0, 0, 0,  1, 1, 1, 0, 0, 0, 0, 0,
    1, 1, 1, 1, 0, 0, 0, 0,  1, 1, 1, 1, 1, 0, 0, 0,  1, 1, 1, 1, 1, 1, 0, 0,
    1, 1, 1, 1, 1, 1, 1, 0,  1, 1, 1, 1, 1, 1, 1, 1]}
  starts: {shape: [2], dtype: int64, data: [0, 0]}
  ends: {shape: [2], dtype: int64, data: [5, 5]}
  axes: {shape: [2], dtype: int64, data: [2, 3]}
  masked: {shape: [], data: [-10000.0]}
nodes:
  - {op: Slice, inputs: [bias, starts, ends, axes], outputs: [mask]}
  - {op: Where, inputs: [mask, scores, masked], outputs: [w]}
  - {op: Softmax, inputs: [w], outputs: [p]}
outputs: [p]
)");
}

// Every conversion between float32, int32, int64, int8, uint8 and bool that models write;
// floats scaled so that truncation and wrapping to the narrow types happen.
TEST(CastOp, ConvertsBetweenDtypes) {
  expect_matches_reference(R"(
tlmc: 1
name: casts
inputs:
  x: {shape: [4, 19]}
  i: {shape: [4, 19], dtype: int64}
  b: {shape: [4, 19], dtype: bool}
  k: {shape: [19], dtype: int32}
weights:
  scale: {shape: [], data: [300.0]}
nodes:
  - {op: Mul, inputs: [x, scale], outputs: [big]}
  - {op: Cast, inputs: [big], outputs: [to_i64], attrs: {to: 7}}
  - {op: Cast, inputs: [big], outputs: [to_i32], attrs: {to: 6}}
  - {op: Cast, inputs: [big], outputs: [to_i8], attrs: {to: 3}}
  - {op: Cast, inputs: [big], outputs: [to_u8], attrs: {to: 2}}
  - {op: Cast, inputs: [x], outputs: [to_bool], attrs: {to: 9}}
  - {op: Cast, inputs: [i], outputs: [i_to_f], attrs: {to: 1}}
  - {op: Cast, inputs: [i], outputs: [i_to_bool], attrs: {to: 9}}
  - {op: Cast, inputs: [i], outputs: [i_to_i32], attrs: {to: 6}}
  - {op: Cast, inputs: [b], outputs: [b_to_f], attrs: {to: 1}}
  - {op: Cast, inputs: [b], outputs: [b_to_i64], attrs: {to: 7}}
  - {op: Cast, inputs: [k], outputs: [k_to_i64], attrs: {to: 7}}
  - {op: Cast, inputs: [x], outputs: [same], attrs: {to: 1}}
  - {op: Mul, inputs: [b_to_f, x], outputs: [masked]}
outputs: [to_i64, to_i32, to_i8, to_u8, to_bool, i_to_f, i_to_bool, i_to_i32, b_to_f, b_to_i64,
          k_to_i64, same, masked]
)");
}

// Conversions to and from float16 and bfloat16: rounding to nearest even, float16's
// overflow to infinity and its subnormals (x times 1e5 and 1e-6), integers through float32.
TEST(CastOp, ConvertsToAndFromTheSixteenBitFloats) {
  expect_matches_reference(R"(
tlmc: 1
name: half_casts
inputs:
  x: {shape: [4, 19]}
  i: {shape: [4, 19], dtype: int64}
weights:
  huge: {shape: [], data: [100000.0]}
  tiny: {shape: [], data: [0.000001]}
nodes:
  - {op: Cast, inputs: [x], outputs: [x_bf16], attrs: {to: 16}}
  - {op: Cast, inputs: [x], outputs: [x_f16], attrs: {to: 10}}
  - {op: Mul, inputs: [x, huge], outputs: [big]}
  - {op: Cast, inputs: [big], outputs: [big_f16], attrs: {to: 10}}
  - {op: Mul, inputs: [x, tiny], outputs: [small]}
  - {op: Cast, inputs: [small], outputs: [small_f16], attrs: {to: 10}}
  - {op: Cast, inputs: [small_f16], outputs: [small_back], attrs: {to: 1}}
  - {op: Cast, inputs: [x_bf16], outputs: [bf16_back], attrs: {to: 1}}
  - {op: Cast, inputs: [x_bf16], outputs: [bf16_to_f16], attrs: {to: 10}}
  - {op: Cast, inputs: [big_f16], outputs: [f16_to_i32], attrs: {to: 6}}
  - {op: Cast, inputs: [i], outputs: [i_bf16], attrs: {to: 16}}
  - {op: Add, inputs: [bf16_back, x], outputs: [sum]}
outputs: [x_bf16, x_f16, big_f16, small_f16, small_back, bf16_back, bf16_to_f16, i_bf16, sum]
)");
}

// float64: converted to and from the other types, selected by Max, Min and Where. Never
// rounded through float32 on the way: 2^24 + 1 and 2^24 + 3, which float32 rounds to even
// neighbours, wrap to the int8s 1 and 3 (0 and 4 through float32), a difference --check's
// tolerance sees.
TEST(CastOp, ConvertsToAndFromFloat64) {
  expect_matches_reference(R"(
tlmc: 1
name: double_casts
inputs:
  x: {shape: [4, 19]}
  d: {shape: [4, 19], dtype: float64}
  i: {shape: [4, 19], dtype: int64}
  c: {shape: [4, 19], dtype: bool}
  e: {shape: [3], dtype: float64}
weights:
  floor: {shape: [19], dtype: float64, init: {uniform: [-0.5, 0.5]}, seed: 3}
  odd: {shape: [3], dtype: float64, data: [16777217.0, 16777219.0, 33554435.0]}
nodes:
  - {op: Cast, inputs: [x], outputs: [x_f64], attrs: {to: 11}}
  - {op: Cast, inputs: [d], outputs: [d_f32], attrs: {to: 1}}
  - {op: Cast, inputs: [d], outputs: [d_bf16], attrs: {to: 16}}
  - {op: Cast, inputs: [d], outputs: [d_f16], attrs: {to: 10}}
  - {op: Cast, inputs: [d_f16], outputs: [f16_f64], attrs: {to: 11}}
  - {op: Cast, inputs: [i], outputs: [i_f64], attrs: {to: 11}}
  - {op: Cast, inputs: [d], outputs: [d_i64], attrs: {to: 7}}
  - {op: Cast, inputs: [d], outputs: [d_bool], attrs: {to: 9}}
  - {op: Cast, inputs: [c], outputs: [c_f64], attrs: {to: 11}}
  - {op: Max, inputs: [d, floor, x_f64], outputs: [hi]}
  - {op: Min, inputs: [d, floor], outputs: [lo]}
  - {op: Where, inputs: [c, d, x_f64], outputs: [pick]}
  - {op: Max, inputs: [e, odd], outputs: [big]}
  - {op: Cast, inputs: [big], outputs: [wrapped], attrs: {to: 3}}
  - {op: Transpose, inputs: [hi], outputs: [moved], attrs: {perm: [1, 0]}}
outputs: [x_f64, d_f32, d_bf16, d_f16, f16_f64, i_f64, d_i64, d_bool, c_f64, hi, lo, pick,
          wrapped, moved]
)");
}

// The rounding cases, computed in the kernel (x * 0 + w, so that nothing is folded): ties
// to even either way, NaN, infinities, float32's largest and smallest, float16's largest
// and its overflow, subnormals, signed zeros (false as bools); vector and scalar stores.
TEST(CastOp, SixteenBitRoundingCasesInTheKernel) {
  expect_matches_reference(R"(
tlmc: 1
name: half_ties
inputs:
  x: {shape: [2, 19]}
weights:
  zero: {shape: [], data: [0.0]}
  ties: {shape: [19], data: [1.00390625, 1.01171875, -1.00390625, -1.01171875, .nan, .inf, -.inf,
                             3.4028235e38, 1.1754944e-38, 1.0e-40, 0.0, -0.0, 65504.0, 65520.0,
                             2.98023224e-08, 1.00048828125, 1.00146484375, 0.1, -0.1]}
nodes:
  - {op: Mul, inputs: [x, zero], outputs: [z]}
  - {op: Add, inputs: [z, ties], outputs: [t]}
  - {op: Cast, inputs: [t], outputs: [t_bf16], attrs: {to: 16}}
  - {op: Cast, inputs: [t], outputs: [t_f16], attrs: {to: 10}}
  - {op: Cast, inputs: [t_bf16], outputs: [bf16_bool], attrs: {to: 9}}
  - {op: Cast, inputs: [t_f16], outputs: [f16_bool], attrs: {to: 9}}
outputs: [t_bf16, t_f16, bf16_bool, f16_bool]
)");
}

// BERT's attention mask: int64 ids to a float additive mask, (1 - mask) * -10000.
TEST(CastOp, AttentionMaskFromIntegerInputs) {
  expect_matches_reference(R"(
tlmc: 1
name: attention_mask
inputs:
  mask: {shape: [2, 7], dtype: int64}
  scores: {shape: [2, 4, 7, 7]}
weights:
  axes: {shape: [2], dtype: int64, data: [1, 2]}
  one: {shape: [], data: [1.0]}
  big: {shape: [], data: [-10000.0]}
nodes:
  - {op: Unsqueeze, inputs: [mask, axes], outputs: [m4]}
  - {op: Cast, inputs: [m4], outputs: [mf], attrs: {to: 1}}
  - {op: Sub, inputs: [one, mf], outputs: [inv]}
  - {op: Mul, inputs: [inv, big], outputs: [add_mask]}
  - {op: Add, inputs: [scores, add_mask], outputs: [s]}
  - {op: Softmax, inputs: [s], outputs: [p]}
outputs: [p]
)");
}

}  // namespace
}  // namespace tlmc::test
