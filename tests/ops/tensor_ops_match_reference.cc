// Reshape, Flatten, Transpose, Concat and Gather against the reference interpreter, as
// views inside a graph and as graph outputs.
#include <gtest/gtest.h>

#include "ops/op_test_support.h"

namespace tlmc::test {
namespace {

TEST(TensorOps, ReshapeFlattenTranspose) {
  expect_matches_reference(R"(
tlmc: 1
name: shape_ops
inputs:
  x: {shape: [2, 3, 4, 5]}
weights:
  to_2d: {shape: [2], dtype: int64, data: [0, -1]}
  to_3d: {shape: [3], dtype: int64, data: [6, -1, 5]}
nodes:
  - {op: Reshape, inputs: [x, to_2d], outputs: [r2]}
  - {op: Reshape, inputs: [x, to_3d], outputs: [r3]}
  - {op: Relu, inputs: [r3], outputs: [r3relu]}
  - {op: Flatten, inputs: [x], outputs: [f1]}
  - {op: Flatten, inputs: [x], outputs: [f0], attrs: {axis: 0}}
  - {op: Flatten, inputs: [x], outputs: [f3], attrs: {axis: 3}}
  - {op: Transpose, inputs: [x], outputs: [rev]}
  - {op: Transpose, inputs: [x], outputs: [perm], attrs: {perm: [0, 2, 3, 1]}}
outputs: [r2, r3relu, f1, f0, f3, rev, perm]
)");
}

TEST(TensorOps, ConcatAlongAnyAxis) {
  expect_matches_reference(R"(
tlmc: 1
name: concats
inputs:
  a: {shape: [2, 3, 5]}
  b: {shape: [2, 1, 5]}
  c: {shape: [2, 4, 5]}
  d: {shape: [2, 3, 7]}
nodes:
  - {op: Concat, inputs: [a, b, c], outputs: [mid], attrs: {axis: 1}}
  - {op: Concat, inputs: [a, d], outputs: [last], attrs: {axis: -1}}
  - {op: Concat, inputs: [a, a], outputs: [first], attrs: {axis: 0}}
outputs: [mid, last, first]
)");
}

TEST(TensorOps, GatherEmbeddingsAndAxes) {
  expect_matches_reference(R"(
tlmc: 1
name: gathers
inputs:
  ids: {shape: [2, 3], dtype: int64}
  x: {shape: [4, 6, 5]}
weights:
  table: {shape: [11, 16], init: {uniform: [-1, 1]}}
  pick: {shape: [3], dtype: int64, data: [5, -1, 0]}
nodes:
  - {op: Gather, inputs: [table, ids], outputs: [embedded]}
  - {op: Gather, inputs: [x, pick], outputs: [middle], attrs: {axis: 1}}
outputs: [embedded, middle]
)");
}

TEST(TensorOps, ZeroSizedTensorsAndEmptyReductions) {
  expect_matches_reference(R"(
tlmc: 1
name: empty
inputs:
  x: {shape: [0, 4]}
  y: {shape: [3, 0]}
nodes:
  - {op: Relu, inputs: [x], outputs: [r]}
  - {op: ReduceSum, inputs: [y], outputs: [s], attrs: {keepdims: 0}}
  - {op: ReduceMean, inputs: [x], outputs: [m], attrs: {axes: [1]}}
outputs: [r, s, m]
)");
}

}  // namespace
}  // namespace tlmc::test
