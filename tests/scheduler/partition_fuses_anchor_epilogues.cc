// Partitioning: anchors absorb their element-wise epilogue, element-wise chains fuse,
// views share storage, a result read twice or written out stops a fusion, and a node with
// several outputs stands alone, its kernel writing every part read outside it.
#include <gtest/gtest.h>

#include "frontend/reduced_precision.h"
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

// A Cast widening a bfloat16 tensor for one element-wise reader (a residual sum of
// --bf16-storage shared, or a bfloat16 model's operator) waits for that reader's kernel,
// which computes it in its loads: it is no kernel of its own, and the stored tensor stays
// the bfloat16 one. Where the widened tensor has two readers it is a kernel of its own.
TEST(Partition, WideningsJoinTheirReadersKernel) {
  ir::Graph g = graph(R"(inputs:
  x: {shape: [1, 16, 4, 4]}
weights:
  w: {shape: [16, 16, 1, 1], init: zeros}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c]}
  - {op: Relu, inputs: [c], outputs: [t]}
  - {op: Cast, inputs: [t], outputs: [t16], attrs: {to: 16}}
  - {op: Cast, inputs: [t16], outputs: [tw], attrs: {to: 1}}
  - {op: Cast, inputs: [t16], outputs: [tv], attrs: {to: 1}}
  - {op: Cast, inputs: [t16], outputs: [tu], attrs: {to: 1}}
  - {op: Conv, inputs: [tu, w], outputs: [d]}
  - {op: Add, inputs: [d, tw], outputs: [s]}
  - {op: Sub, inputs: [s, tv], outputs: [y]}
  - {op: Relu, inputs: [tv], outputs: [z]}
outputs: [y, z]
)");
  const Partition p = partition_graph(g);
  // Conv, Relu, Cast(t16) | Cast(tv) | Cast(tu) | Cast(tw), Conv, Add, Sub | Relu: tw joins
  // the sum's kernel; tv has two readers and tu is read by a convolution (not element-wise),
  // so both are kernels of their own, before their readers.
  std::vector<std::vector<int>> expected = {{0, 1, 2}, {4}, {5}, {3, 6, 7, 8}, {9}};
  EXPECT_EQ(p.subgraphs, expected);
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

// Regression: an epilogue whose values feed several of its own nodes stopped the fusion at
// the first such value: the erf-form GELU after a Gemm and its bias was a kernel of its own.
TEST(Partition, EpiloguesThatReadAValueTwiceFuseIntoTheProduct) {
  ir::Graph g = graph(R"(inputs:
  x: {shape: [4, 8]}
weights:
  w: {shape: [8, 6], init: zeros}
  b: {shape: [6], init: zeros}
  k: {shape: [], data: [1.4142135]}
  one: {shape: [], data: [1.0]}
  half: {shape: [], data: [0.5]}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [mm]}
  - {op: Add, inputs: [mm, b], outputs: [z]}
  - {op: Div, inputs: [z, k], outputs: [zs]}
  - {op: Erf, inputs: [zs], outputs: [e]}
  - {op: Add, inputs: [e, one], outputs: [e1]}
  - {op: Mul, inputs: [z, e1], outputs: [m]}
  - {op: Mul, inputs: [m, half], outputs: [gelu]}
  - {op: Sigmoid, inputs: [gelu], outputs: [sg]}
  - {op: Mul, inputs: [gelu, sg], outputs: [y]}
outputs: [y]
)");
  Partition p = partition_graph(g);
  ASSERT_EQ(p.subgraphs.size(), 1u);  // the GELU and a SiLU after it
  EXPECT_EQ(p.subgraphs[0].size(), 9u);
}

// A value of the epilogue that another subgraph (or the caller) reads is stored: the
// fusion stops where it is the one tensor leaving, and never leaves two.
TEST(Partition, AnEpilogueValueReadOutsideEndsTheSubgraph) {
  ir::Graph g = graph(R"(inputs:
  x: {shape: [4, 8]}
weights:
  w: {shape: [8, 8], init: zeros}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [mm]}
  - {op: Relu, inputs: [mm], outputs: [r]}
  - {op: Sigmoid, inputs: [r], outputs: [s]}
  - {op: Mul, inputs: [r, s], outputs: [t]}
  - {op: MatMul, inputs: [r, w], outputs: [u]}
  - {op: Add, inputs: [t, u], outputs: [y]}
outputs: [y]
)");
  Partition p = partition_graph(g);
  // MatMul + Relu (r is read by the second product) | Sigmoid, Mul | MatMul + Add.
  ASSERT_EQ(p.subgraphs.size(), 3u);
  EXPECT_EQ(p.subgraphs[0].size(), 2u);
  EXPECT_EQ(p.subgraphs[1].size(), 2u);
  EXPECT_EQ(p.subgraphs[2].size(), 2u);
}

// Inlined, a value read twice is computed twice: a chain of x + x doubles at every node,
// so the fusion stops before the expression passes 64 operations.
TEST(Partition, AnEpilogueStopsBeforeItsExpressionExplodes) {
  std::string nodes = "  - {op: Relu, inputs: [x], outputs: [a0]}\n";
  for (int i = 1; i <= 10; ++i)
    nodes += "  - {op: Add, inputs: [a" + std::to_string(i - 1) + ", a" + std::to_string(i - 1) +
             "], outputs: [a" + std::to_string(i) + "]}\n";
  ir::Graph g = graph("inputs:\n  x: {shape: [16]}\nnodes:\n" + nodes + "outputs: [a10]\n");
  Partition p = partition_graph(g);
  ASSERT_GE(p.subgraphs.size(), 2u);
  EXPECT_EQ(p.subgraphs[0].size(), 6u);  // Relu (1), then 3, 7, 15, 31, 63 operations
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

// Under --precision bf16 a window over few channels has its columns folded into channels by
// a Pad, a Slice per column and a Concat (frontend/reduced_precision.cc): one kernel, with
// the Cast that rounds its result, for the 7 columns of ResNet-50's stem and for a window
// without padding (whose Pad, of zero width, starts that kernel).
TEST(Partition, AWindowsFoldedColumnsAreCopiedByOneKernel) {
  for (const char* attrs : {"{strides: [2, 2], pads: [3, 3, 3, 3]}", "{}"}) {
    const ir::Graph g =
        frontend::demote_products_to_bf16(frontend::read_yaml_text(std::string(R"(tlmc: 1
name: stem
inputs:
  x: {shape: [1, 3, 32, 32]}
weights:
  w: {shape: [16, 3, 7, 7], init: {uniform: [-1, 1]}, seed: 1}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [y], attrs: )") + attrs + R"(}
outputs: [y]
)",
                                                                   "stem.yaml"),
                                          {});
    const Partition p = partition_graph(g);
    int copies = 0;
    for (const std::vector<int>& group : p.subgraphs) {
      int slices = 0, others = 0;
      for (int n : group) (g.nodes[static_cast<size_t>(n)].op == "Slice" ? slices : others) += 1;
      if (slices == 0) continue;
      ++copies;
      EXPECT_EQ(slices, 7) << attrs;
      EXPECT_EQ(others, 3) << attrs << ": the Pad, the Concat and the rounding Cast";
    }
    EXPECT_EQ(copies, 1) << attrs;
  }
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

// With fuse_conversions, a Transpose that a dense convolution alone reads (a conversion into
// its layout) is computed in that convolution's kernel, whose epilogue still follows; a
// Transpose read by a pool (or a depthwise convolution: vectors of channels, gathered), by a
// product, or by two readers stays a kernel of its own.
TEST(Partition, ConversionsJoinTheDenseConvolutionReadingThem) {
  ir::Graph g = graph(R"(inputs:
  x: {shape: [1, 8, 8, 4]}
  m: {shape: [4, 4]}
weights:
  w: {shape: [4, 4, 3, 3], init: zeros}
nodes:
  - {op: Transpose, inputs: [x], outputs: [t], attrs: {perm: [0, 3, 1, 2]}}
  - {op: Conv, inputs: [t, w], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c], outputs: [r]}
  - {op: Transpose, inputs: [r], outputs: [u], attrs: {perm: [0, 1, 3, 2]}}
  - {op: MaxPool, inputs: [u], outputs: [p], attrs: {kernel_shape: [2, 2]}}
  - {op: Transpose, inputs: [m], outputs: [mt], attrs: {perm: [1, 0]}}
  - {op: MatMul, inputs: [m, mt], outputs: [mm]}
  - {op: Transpose, inputs: [p], outputs: [q], attrs: {perm: [0, 1, 3, 2]}}
  - {op: Relu, inputs: [q], outputs: [q1]}
  - {op: AveragePool, inputs: [q], outputs: [q2], attrs: {kernel_shape: [2, 2]}}
outputs: [mm, q1, q2]
)");
  const Partition apart = partition_graph(g);
  const Partition fused = partition_graph(g, true);
  // Apart: each Transpose alone (4), Conv + Relu, MaxPool, MatMul, Relu, AveragePool.
  EXPECT_EQ(apart.subgraphs.size(), 9u);
  // Fused: Transpose + Conv + Relu; the pool's input, the MatMul's operand and the Transpose
  // with two readers stay apart.
  ASSERT_EQ(fused.subgraphs.size(), 8u);
  EXPECT_EQ(fused.subgraphs[0], (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(fused.subgraphs[1], (std::vector<int>{3}));
}

}  // namespace
}  // namespace tlmc::scheduler
