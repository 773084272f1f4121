// Expand, Slice, Split, Pad and Tile against the reference interpreter: odd shapes,
// negative axes and steps, the ends exporters write (INT64_MAX), every pad mode, and Split's
// parts read by different consumers and returned as graph outputs.
#include <gtest/gtest.h>

#include "ops/op_test_support.h"

namespace tlmc::test {
namespace {

TEST(IndexingOps, ExpandBroadcastsBothWays) {
  expect_matches_reference(R"(
tlmc: 1
name: expands
inputs:
  z: {shape: [6, 1]}
  i: {shape: [3], dtype: int64}
weights:
  to4d: {shape: [4], dtype: int64, data: [2, 1, 1, 5]}
  to_lower: {shape: [1], dtype: int64, data: [1]}
  to_rows: {shape: [2], dtype: int64, data: [4, 1]}
nodes:
  - {op: Expand, inputs: [z, to4d], outputs: [e4]}
  - {op: Expand, inputs: [z, to_lower], outputs: [same]}
  - {op: Expand, inputs: [i, to_rows], outputs: [ei]}
  - {op: Sigmoid, inputs: [e4], outputs: [y]}
outputs: [y, same, ei]
)");
}

TEST(IndexingOps, SliceWithNegativeIndicesStepsAndHugeEnds) {
  expect_matches_reference(R"(
tlmc: 1
name: slices
inputs:
  x: {shape: [5, 6, 7]}
weights:
  s1: {shape: [2], dtype: int64, data: [-1, 1]}
  e1: {shape: [2], dtype: int64, data: [-9223372036854775808, 9223372036854775807]}
  a1: {shape: [2], dtype: int64, data: [2, -2]}
  st1: {shape: [2], dtype: int64, data: [-2, 2]}
  s2: {shape: [1], dtype: int64, data: [2]}
  e2: {shape: [1], dtype: int64, data: [-1]}
  s3: {shape: [1], dtype: int64, data: [10]}
  e3: {shape: [1], dtype: int64, data: [-10]}
  st3: {shape: [1], dtype: int64, data: [-3]}
  a3: {shape: [1], dtype: int64, data: [0]}
  s4: {shape: [1], dtype: int64, data: [4]}
  e4: {shape: [1], dtype: int64, data: [2]}
nodes:
  - {op: Slice, inputs: [x, s1, e1, a1, st1], outputs: [reversed]}
  - {op: Slice, inputs: [x, s2, e2], outputs: [first_axis]}
  - {op: Slice, inputs: [x, s3, e3, a3, st3], outputs: [clamped]}
  - {op: Slice, inputs: [x, s4, e4, a3], outputs: [empty]}
  - {op: Relu, inputs: [reversed], outputs: [y]}
outputs: [y, first_axis, clamped, empty]
)");
}

TEST(IndexingOps, SplitPartsGoToDifferentConsumers) {
  expect_matches_reference(R"(
tlmc: 1
name: splits
inputs:
  x: {shape: [2, 3, 7]}
  qkv: {shape: [4, 24]}
weights:
  sizes: {shape: [3], dtype: int64, data: [1, 4, 2]}
  w: {shape: [8, 5], init: {uniform: [-1, 1]}}
nodes:
  - {op: Split, inputs: [x, sizes], outputs: [s0, s1, s2], attrs: {axis: -1}}
  - {op: Relu, inputs: [s1], outputs: [s1_relu]}
  - {op: Tanh, inputs: [s1], outputs: [s1_tanh]}
  - {op: Split, inputs: [qkv], outputs: [q, k, v], attrs: {axis: 1}}
  - {op: Add, inputs: [q, v], outputs: [qv]}
  - {op: MatMul, inputs: [k, w], outputs: [kw]}
  - {op: Split, inputs: [x], outputs: [a, "", c], attrs: {axis: 1}}
  - {op: Split, inputs: [x], outputs: [whole]}
outputs: [s0, s1_relu, s1_tanh, s2, qv, kw, a, c, whole]
)");
}

TEST(IndexingOps, SplitWithAnUnreadPart) {
  expect_matches_reference(R"(
tlmc: 1
name: split_unread
inputs:
  x: {shape: [6, 10]}
nodes:
  - {op: Split, inputs: [x], outputs: [a, b], attrs: {axis: 0}}
  - {op: Exp, inputs: [b], outputs: [y]}
outputs: [y]
)");
}

TEST(IndexingOps, PadInEveryMode) {
  expect_matches_reference(R"(
tlmc: 1
name: pads
inputs:
  x: {shape: [2, 4, 5]}
  i: {shape: [3, 4], dtype: int64}
weights:
  pads: {shape: [6], dtype: int64, data: [0, 3, 2, 1, 0, -1]}
  value: {shape: [], data: [1.5]}
  ipads: {shape: [4], dtype: int64, data: [1, 0, 0, 2]}
  ivalue: {shape: [1], dtype: int64, data: [-4]}
nodes:
  - {op: Pad, inputs: [x, pads, value], outputs: [constant]}
  - {op: Pad, inputs: [x, pads], outputs: [zeros]}
  - {op: Pad, inputs: [x, pads], outputs: [reflect], attrs: {mode: reflect}}
  - {op: Pad, inputs: [x, pads], outputs: [edge], attrs: {mode: edge}}
  - {op: Pad, inputs: [i, ipads, ivalue], outputs: [ipadded]}
  - {op: Relu, inputs: [constant], outputs: [y]}
outputs: [y, zeros, reflect, edge, ipadded]
)");
}

TEST(IndexingOps, TileRepeatsEachAxis) {
  expect_matches_reference(R"(
tlmc: 1
name: tiles
inputs:
  x: {shape: [2, 3, 1]}
weights:
  reps: {shape: [3], dtype: int64, data: [2, 1, 5]}
nodes:
  - {op: Tile, inputs: [x, reps], outputs: [t]}
  - {op: Neg, inputs: [t], outputs: [y]}
outputs: [t, y]
)");
}

}  // namespace
}  // namespace tlmc::test
