// Partitioning: anchors absorb their element-wise epilogue, element-wise chains fuse,
// views share storage, a result read twice or written out stops a fusion, and a node with
// several outputs stands alone, its kernel writing every part read outside it.
#include <gtest/gtest.h>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "ir/te.h"
#include "scheduler/partition.h"

namespace tlmc::scheduler {
namespace {

ir::Graph graph(const std::string& body) {
  return frontend::read_yaml_text("tlmc: 1\nname: g\n" + body, "g.yaml");
}

TEST(Partition, ConvBatchNormReluResidualIsOneSubgraph) {
  ir::Graph g = graph(R"(inputs:
  x: {shape: [1, 4, 8, 8]}
weights:
  w: {shape: [4, 4, 3, 3], init: zeros}
  s: {shape: [4], init: ones}
  b: {shape: [4], init: zeros}
  m: {shape: [4], init: zeros}
  v: {shape: [4], init: ones}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
  - {op: BatchNormalization, inputs: [c, s, b, m, v], outputs: [n]}
  - {op: Relu, inputs: [n], outputs: [r]}
  - {op: Add, inputs: [r, x], outputs: [y]}
outputs: [y]
)");
  Partition p = partition_graph(g);
  ASSERT_EQ(p.subgraphs.size(), 1u);
  EXPECT_EQ(p.subgraphs[0].size(), 4u);
}

TEST(Partition, ViewsShareStorageAndReadersStopFusion) {
  ir::Graph g = graph(R"(inputs:
  x: {shape: [2, 6]}
weights:
  shape: {shape: [2], dtype: int64, data: [3, 4]}
nodes:
  - {op: Relu, inputs: [x], outputs: [a]}
  - {op: Reshape, inputs: [a, shape], outputs: [r]}
  - {op: Sigmoid, inputs: [r], outputs: [s]}
  - {op: Exp, inputs: [s], outputs: [e]}
  - {op: Tanh, inputs: [s], outputs: [t]}
outputs: [e, t]
)");
  Partition p = partition_graph(g);
  // Relu | Sigmoid (read twice: stops) | Exp | Tanh; the Reshape is a view of a.
  ASSERT_EQ(p.subgraphs.size(), 4u);
  EXPECT_EQ(p.storage_of[static_cast<size_t>(g.find_tensor("r"))], g.find_tensor("a"));
}

TEST(Partition, ElementwiseChainsFuse) {
  ir::Graph g = graph(R"(inputs:
  x: {shape: [5]}
  y: {shape: [5]}
nodes:
  - {op: Add, inputs: [x, y], outputs: [a]}
  - {op: Mul, inputs: [a, x], outputs: [b]}
  - {op: Tanh, inputs: [b], outputs: [c]}
outputs: [c]
)");
  EXPECT_EQ(partition_graph(g).subgraphs.size(), 1u);
}

TEST(Partition, ASplitIsASubgraphWritingEveryPartReadOutside) {
  ir::Graph g = graph(R"(inputs:
  x: {shape: [4, 6]}
nodes:
  - {op: Relu, inputs: [x], outputs: [r]}
  - {op: Split, inputs: [r], outputs: [a, b, c], attrs: {axis: 1}}
  - {op: Exp, inputs: [a], outputs: [ea]}
  - {op: Tanh, inputs: [b], outputs: [tb]}
outputs: [ea, tb, c]
)");
  Partition p = partition_graph(g);
  // Relu | Split | Exp | Tanh: the Split joins no chain and starts none.
  ASSERT_EQ(p.subgraphs.size(), 4u);
  const std::vector<int>& split = p.subgraphs[1];
  ASSERT_EQ(split.size(), 1u);
  EXPECT_EQ(g.nodes[static_cast<size_t>(split[0])].op, "Split");
  const ir::LoweredSubgraph lowered = ir::lower_subgraph(g, split);
  EXPECT_EQ(lowered.output_tensors,
            (std::vector<int>{g.find_tensor("a"), g.find_tensor("b"), g.find_tensor("c")}));
  EXPECT_EQ(lowered.program.stages.size(), 3u);
}

std::string key_of(const std::string& body) {
  ir::Graph g = graph(body);
  Partition p = partition_graph(g);
  return ir::workload_key(ir::lower_subgraph(g, p.subgraphs.at(0)).program);
}

TEST(WorkloadKey, IgnoresNamesButNotShapesOrConstants) {
  const std::string a = key_of(R"(inputs:
  x: {shape: [4, 8]}
  w: {shape: [8, 3]}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: LeakyRelu, inputs: [h], outputs: [y], attrs: {alpha: 0.1}}
outputs: [y]
)");
  const std::string renamed = key_of(R"(inputs:
  input_7: {shape: [4, 8]}
  weights: {shape: [8, 3]}
nodes:
  - {op: LeakyRelu, inputs: [mm], outputs: [out], attrs: {alpha: 0.1}, name: act}
  - {op: MatMul, inputs: [input_7, weights], outputs: [mm], name: fc}
outputs: [out]
)");
  const std::string other_alpha = key_of(R"(inputs:
  x: {shape: [4, 8]}
  w: {shape: [8, 3]}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: LeakyRelu, inputs: [h], outputs: [y], attrs: {alpha: 0.2}}
outputs: [y]
)");
  const std::string other_shape = key_of(R"(inputs:
  x: {shape: [4, 8]}
  w: {shape: [8, 5]}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: LeakyRelu, inputs: [h], outputs: [y], attrs: {alpha: 0.1}}
outputs: [y]
)");
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a, renamed);
  EXPECT_NE(a, other_alpha);
  EXPECT_NE(a, other_shape);
}

}  // namespace
}  // namespace tlmc::scheduler
