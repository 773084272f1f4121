// The tuning table names each task by its operators and shapes (tune::describe_nodes), so
// that a person reads "MatMul 128x768x3072 + Add + Erf", not a workload hash: products with
// their shapes first, batched ones with their count, convolutions with kernel, strides,
// channels and output size, then the other operators once each, Casts left out.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "frontend/yaml_reader.h"
#include "tune/measure_task.h"

namespace tlmc::tune {
namespace {

std::vector<int> all_nodes(const ir::Graph& g) {
  std::vector<int> out(g.nodes.size());
  std::iota(out.begin(), out.end(), 0);
  return out;
}

TEST(TaskDescription, NamesProductsWithShapesThenTheOtherOperators) {
  const ir::Graph g = frontend::read_yaml_text(R"(tlmc: 1
name: d
inputs:
  x: {shape: [3, 17, 40]}
  a: {shape: [40, 6]}
weights:
  w: {shape: [40, 24], init: {uniform: [-1, 1]}, seed: 1}
  b: {shape: [24], init: {uniform: [-1, 1]}, seed: 2}
  v: {shape: [40, 5], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: Add, inputs: [h, b], outputs: [hb]}
  - {op: Erf, inputs: [hb], outputs: [e]}
  - {op: Add, inputs: [e, hb], outputs: [y]}
  - {op: Cast, inputs: [a], outputs: [a16], attrs: {to: 16}}
  - {op: Cast, inputs: [a16], outputs: [a32], attrs: {to: 1}}
  - {op: Gemm, inputs: [a32, v], outputs: [z], attrs: {transA: 1}}
outputs: [y, z]
)",
                                               "d.yaml");
  EXPECT_EQ(describe_nodes(g, {0, 1, 2, 3}), "MatMul 17x40x24 (x3) + Add + Erf");
  EXPECT_EQ(describe_nodes(g, {4, 5, 6}), "Gemm 6x40x5");
  EXPECT_EQ(describe_nodes(g, {1}), "Add");
}

TEST(TaskDescription, NamesConvolutionsByKernelStridesChannelsAndOutput) {
  const ir::Graph g = frontend::read_yaml_text(R"(tlmc: 1
name: c
inputs:
  x: {shape: [1, 8, 15, 9]}
weights:
  w: {shape: [6, 8, 3, 1], init: {uniform: [-1, 1]}, seed: 1}
  d: {shape: [6, 1, 3, 3], init: {uniform: [-1, 1]}, seed: 2}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c], attrs: {strides: [2, 1], pads: [1, 0, 1, 0]}}
  - {op: Relu, inputs: [c], outputs: [r]}
  - {op: Conv, inputs: [r, d], outputs: [y], attrs: {group: 6, pads: [1, 1, 1, 1]}}
outputs: [y]
)",
                                               "c.yaml");
  EXPECT_EQ(describe_nodes(g, all_nodes(g)), "Conv 3x1/2x1 8->6 8x9 + Conv 3x3 6->6 g6 8x9 + Relu");
}

}  // namespace
}  // namespace tlmc::tune
