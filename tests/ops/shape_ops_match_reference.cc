// Shape, Unsqueeze, Squeeze, ConstantOfShape, Range and shape arithmetic against the
// reference interpreter: folded as the pipeline folds them, and compiled unfolded so that
// their lowerings run too.
#include <gtest/gtest.h>

#include "ops/op_test_support.h"
#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

// torch's x.view(x.size(0), -1): the shape is computed at compile time, the Reshape stays a
// view; Unsqueeze and Squeeze are views too, copied where they are graph outputs.
TEST(ShapeOps, ComputedReshapeAndViews) {
  expect_matches_reference(R"(
tlmc: 1
name: computed_reshape
inputs:
  x: {shape: [2, 3, 4, 5]}
weights:
  zero: {shape: [], dtype: int64, data: [0]}
  ax0: {shape: [1], dtype: int64, data: [0]}
  minus1: {shape: [1], dtype: int64, data: [-1]}
  axes: {shape: [2], dtype: int64, data: [-1, 1]}
  squeeze_axes: {shape: [1], dtype: int64, data: [-1]}
nodes:
  - {op: Shape, inputs: [x], outputs: [s]}
  - {op: Gather, inputs: [s, zero], outputs: [n]}
  - {op: Unsqueeze, inputs: [n, ax0], outputs: [n1]}
  - {op: Concat, inputs: [n1, minus1], outputs: [target], attrs: {axis: 0}}
  - {op: Reshape, inputs: [x, target], outputs: [flat]}
  - {op: Relu, inputs: [flat], outputs: [y]}
  - {op: Unsqueeze, inputs: [x, axes], outputs: [u]}
  - {op: Tanh, inputs: [u], outputs: [ut]}
  - {op: Squeeze, inputs: [ut], outputs: [squeezed_all]}
  - {op: Squeeze, inputs: [ut, squeeze_axes], outputs: [squeezed_last]}
  - {op: Shape, inputs: [u], outputs: [u_shape], attrs: {start: 1, end: -1}}
outputs: [y, u, squeezed_all, squeezed_last, u_shape]
)");
}

TEST(ShapeOps, ConstantOfShapeAndRangeFolded) {
  expect_matches_reference(R"(
tlmc: 1
name: filled
inputs:
  x: {shape: [3, 4]}
weights:
  shape: {shape: [2], dtype: int64, data: [3, 4]}
  start: {shape: [], dtype: int64, data: [2]}
  limit: {shape: [], dtype: int64, data: [-9]}
  delta: {shape: [], dtype: int64, data: [-3]}
  fstart: {shape: [], data: [0.5]}
  flimit: {shape: [], data: [2.0]}
  fdelta: {shape: [], data: [0.25]}
nodes:
  - {op: ConstantOfShape, inputs: [shape], outputs: [ones], attrs: {value: 1.5}}
  - {op: Add, inputs: [x, ones], outputs: [y]}
  - {op: ConstantOfShape, inputs: [shape], outputs: [ints], attrs: {value: 7, dtype: int64}}
  - {op: ConstantOfShape, inputs: [shape], outputs: [trues], attrs: {value: 1, dtype: bool}}
  - {op: ConstantOfShape, inputs: [shape], outputs: [zeros]}
  - {op: Range, inputs: [start, limit, delta], outputs: [r]}
  - {op: Range, inputs: [fstart, flimit, fdelta], outputs: [fr]}
outputs: [y, ints, trues, zeros, r, fr]
)");
}

// The same operators compiled without folding: each is a kernel of its own.
TEST(ShapeOps, UnfoldedShapeArithmeticRuns) {
  GraphBuilder b;
  b.input("x", {2, 3, 5, 7});
  b.input("k", {4}, ir::DType::Int64);
  b.weight_i64("dims", {3}, {2, 3, 4});
  b.weight_i64("minus1", {}, {-1});
  b.weight_i64("start", {}, {1});
  b.weight_i64("limit", {}, {12});
  b.weight_i64("delta", {}, {4});
  b.weight_i32("start32", {1}, {5});
  b.weight_i32("limit32", {1}, {-2});
  b.weight_i32("delta32", {1}, {-2});
  b.weight("fstart", {}, {-1.0f});
  b.weight("flimit", {}, {1.0f});
  b.weight("fdelta", {}, {0.375f});
  b.node("Shape", {"x"}, {"s"});
  b.node("Shape", {"x"}, {"s_mid"}, {{"start", attr_int(1)}, {"end", attr_int(-1)}});
  b.node("Shape", {"x"}, {"s_none"}, {{"start", attr_int(3)}, {"end", attr_int(1)}});
  b.node("Mul", {"s", "k"}, {"scaled"});
  b.node("Equal", {"k", "s"}, {"same"});
  // torch's Expand shape: where the wanted shape says -1, keep the input's extent.
  b.node("Equal", {"scaled", "minus1"}, {"is_minus1"});
  b.node("Where", {"is_minus1", "s", "scaled"}, {"expand_shape"});
  b.node("ConstantOfShape", {"dims"}, {"halves"}, {{"value", attr_float(0.5)}});
  b.node("ConstantOfShape", {"dims"}, {"sevens"},
         {{"value", attr_float(7)}, {"dtype", attr_string("int32")}});
  b.node("ConstantOfShape", {"dims"}, {"trues"},
         {{"value", attr_float(1)}, {"dtype", attr_string("bool")}});
  b.node("Range", {"start", "limit", "delta"}, {"r"});
  b.node("Range", {"start32", "limit32", "delta32"}, {"r32"});
  b.node("Range", {"fstart", "flimit", "fdelta"}, {"fr"});
  for (const char* out : {"s", "s_mid", "s_none", "same", "expand_shape", "halves", "sevens",
                          "trues", "r", "r32", "fr"})
    b.output(out);
  expect_unfolded_matches_reference(b.build());
}

// Too large to fold (over 64 MiB): generated code fills it at run time.
TEST(ShapeOps, ConstantOfShapeTooLargeToFold) {
  expect_matches_reference(R"(
tlmc: 1
name: large_fill
inputs:
  x: {shape: [1]}
weights:
  shape: {shape: [2], dtype: int64, data: [4097, 4097]}
nodes:
  - {op: ConstantOfShape, inputs: [shape], outputs: [big], attrs: {value: -2.5}}
  - {op: Add, inputs: [big, x], outputs: [y]}
outputs: [y]
)");
}

}  // namespace
}  // namespace tlmc::test
