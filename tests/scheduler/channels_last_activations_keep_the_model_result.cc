// The channels-last and blocked rewrites of a graph: convolutions, pools and the
// element-wise operators after them pass channels-last (or blocked) tensors; conversions stand only
// where the chain meets an operator that stays, a graph input or a graph output; the result is the
// model's.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "frontend/yaml_reader.h"
#include "ir/shape_rules.h"
#include "reference/interpreter.h"
#include "scheduler/channels_last_activations.h"

namespace tlmc::test {
namespace {

ir::Graph graph(const std::string& body) {
  return frontend::read_yaml_text("tlmc: 1\nname: g\n" + body, "g.yaml");
}

// Nodes per operator.
std::map<std::string, int> ops(const ir::Graph& g) {
  std::map<std::string, int> out;
  for (const ir::Node& n : g.nodes) ++out[n.op];
  return out;
}

const ir::Node& producer(const ir::Graph& g, const std::string& tensor) {
  const int t = g.find_tensor(tensor);
  for (const ir::Node& n : g.nodes)
    for (int o : n.outputs)
      if (o == t) return n;
  ADD_FAILURE() << tensor << " has no producer";
  return g.nodes.at(0);
}

// Both graphs on the same random inputs: the same outputs, bit for bit (the reference
// computes a channels-last node on its input moved to the model's layout).
void expect_same_outputs(const ir::Graph& a, const ir::Graph& b) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<reference::HostTensor> inputs;
  for (int i : a.inputs) {
    reference::HostTensor t = reference::HostTensor::zeros(a.type(i));
    for (int64_t k = 0; k < t.type.numel(); ++k) t.f32()[k] = u(rng);
    inputs.push_back(std::move(t));
  }
  const std::vector<reference::HostTensor> x = reference::interpret(a, inputs);
  const std::vector<reference::HostTensor> y = reference::interpret(b, inputs);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(x[i].type, y[i].type) << "output " << i;
    EXPECT_EQ(x[i].bytes, y[i].bytes) << "output " << i;
  }
}

const char* const kChain = R"(inputs:
  x: {shape: [1, 8, 12, 12]}
weights:
  w1: {shape: [16, 8, 3, 3], init: {uniform: [-0.3, 0.3]}, seed: 3}
  b1: {shape: [16], init: {uniform: [-0.3, 0.3]}, seed: 4}
  w2: {shape: [16, 1, 3, 3], init: {uniform: [-0.3, 0.3]}, seed: 5}
  s: {shape: [16, 1, 1], init: {uniform: [0.5, 1.5]}, seed: 6}
  w3: {shape: [16, 16, 1, 1], init: {uniform: [-0.3, 0.3]}, seed: 7}
  bn.scale: {shape: [16], init: {uniform: [0.5, 1.5]}, seed: 8}
  bn.bias: {shape: [16], init: zeros}
  bn.mean: {shape: [16], init: zeros}
  bn.var: {shape: [16], init: ones}
nodes:
  - {op: Conv, inputs: [x, w1, b1], outputs: [c1], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c1], outputs: [r1]}
  - {op: Conv, inputs: [r1, w2], outputs: [c2], attrs: {pads: [1, 1, 1, 1], group: 16, strides: [2, 2]}}
  - {op: Mul, inputs: [c2, s], outputs: [m2]}
  - {op: MaxPool, inputs: [r1], outputs: [p1], attrs: {kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1]}}
  - {op: Add, inputs: [m2, p1], outputs: [a]}
  - {op: Conv, inputs: [a, w3], outputs: [c3]}
  - {op: BatchNormalization, inputs: [c3, bn.scale, bn.bias, bn.mean, bn.var], outputs: [n3]}
  - {op: AveragePool, inputs: [n3], outputs: [ap], attrs: {kernel_shape: [2, 2], strides: [2, 2]}}
  - {op: GlobalAveragePool, inputs: [ap], outputs: [g]}
  - {op: Flatten, inputs: [g], outputs: [f]}
outputs: [f, a]
)";

TEST(ChannelsLastActivations, ChainsPassChannelsLastTensors) {
  const ir::Graph g = graph(kChain);
  const std::optional<ir::Graph> cl = scheduler::channels_last_activations(g);
  ASSERT_TRUE(cl);
  // Inputs and outputs keep the model's layout.
  ASSERT_EQ(cl->inputs.size(), 1u);
  EXPECT_EQ(cl->type(cl->inputs[0]), g.type(g.inputs[0]));
  for (size_t i = 0; i < g.outputs.size(); ++i)
    EXPECT_EQ(cl->type(cl->outputs[i]), g.type(g.outputs[i]));
  for (const char* name : {"c1", "c2", "p1", "c3.cl", "ap"})
    EXPECT_TRUE(ir::is_channels_last(producer(*cl, name))) << name;
  EXPECT_EQ(cl->type(cl->find_tensor("r1")).shape, (ir::Shape{1, 12, 12, 16}));
  // The per-channel constant of Mul is moved at compile time.
  EXPECT_EQ(cl->type(producer(*cl, "m2").inputs[1]).shape, (ir::Shape{1, 1, 1, 16}));
  // Conversions: x in; a out (a graph output also read by the chain); c3 out to the
  // BatchNormalization, n3 back in; g out, as a Reshape: one channel per position moves
  // nothing.
  EXPECT_EQ(ops(*cl)["Transpose"], 4);
  EXPECT_EQ(ops(*cl)["Reshape"], 1);
  EXPECT_EQ(producer(*cl, "a").op, "Transpose");
  EXPECT_EQ(producer(*cl, "n3").op, "BatchNormalization");
  EXPECT_EQ(cl->type(cl->find_tensor("n3")).shape, (ir::Shape{1, 16, 6, 6}));
  expect_same_outputs(g, *cl);
}

TEST(ChannelsLastActivations, OneDimensionalAndThreeDimensionalWindows) {
  const ir::Graph g = graph(R"(inputs:
  x: {shape: [2, 3, 10]}
  v: {shape: [1, 4, 5, 6, 7]}
  skip: {shape: [2, 6, 8]}
weights:
  w: {shape: [6, 3, 3], init: {uniform: [-1, 1]}}
  w3: {shape: [2, 4, 3, 3, 3], init: {uniform: [-1, 1]}}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c]}
  - {op: Add, inputs: [c, skip], outputs: [y]}
  - {op: Conv, inputs: [v, w3], outputs: [c3], attrs: {pads: [1, 1, 1, 1, 1, 1]}}
  - {op: MaxPool, inputs: [c3], outputs: [z], attrs: {kernel_shape: [2, 2, 2]}}
outputs: [y, z]
)");
  const std::optional<ir::Graph> cl = scheduler::channels_last_activations(g);
  ASSERT_TRUE(cl);
  // skip, a graph input of the result's rank, is converted to be added channels-last.
  EXPECT_EQ(cl->type(producer(*cl, "y.cl").inputs[1]).shape, (ir::Shape{2, 8, 6}));
  expect_same_outputs(g, *cl);
}

TEST(BlockedActivations, ChainsPassBlockedTensors) {
  const ir::Graph g = graph(kChain);
  const std::optional<ir::Graph> b = scheduler::blocked_activations(g, 8);
  ASSERT_TRUE(b);
  ASSERT_EQ(b->inputs.size(), 1u);
  EXPECT_EQ(b->type(b->inputs[0]), g.type(g.inputs[0]));
  for (size_t i = 0; i < g.outputs.size(); ++i)
    EXPECT_EQ(b->type(b->outputs[i]), g.type(g.outputs[i]));
  for (const char* name : {"c1", "c2", "p1", "c3.cl", "ap"})
    EXPECT_EQ(ir::channel_layout(producer(*b, name)).block, 8) << name;
  EXPECT_EQ(b->type(b->find_tensor("r1")).shape, (ir::Shape{1, 2, 12, 12, 8}));
  EXPECT_EQ(b->type(producer(*b, "m2").inputs[1]).shape, (ir::Shape{1, 2, 1, 1, 8}));
  // The same four conversions, each a Transpose beside a Reshape to or from [N, C/B, B,
  // H, W]; g's is a Reshape alone.
  EXPECT_EQ(ops(*b)["Transpose"], 4);
  EXPECT_EQ(ops(*b)["Reshape"], 5);
  expect_same_outputs(g, *b);
}

// Blocks of 16: x's 8 channels are not a whole block, so the first convolution keeps the
// model's layout and its result is converted for the depthwise one.
TEST(BlockedActivations, NodesWithPartialBlocksKeepTheModelLayout) {
  const ir::Graph g = graph(kChain);
  const std::optional<ir::Graph> b = scheduler::blocked_activations(g, 16);
  ASSERT_TRUE(b);
  EXPECT_TRUE(ir::channel_layout(producer(*b, "c1")).channels_first());
  EXPECT_EQ(b->type(b->find_tensor("r1")).shape, (ir::Shape{1, 16, 12, 12}));
  EXPECT_EQ(ir::channel_layout(producer(*b, "c2")).block, 16);
  expect_same_outputs(g, *b);
}

TEST(ChannelsLastActivations, GraphsWithoutWindowsStayAsTheyAre) {
  EXPECT_FALSE(scheduler::channels_last_activations(graph(R"(inputs:
  a: {shape: [4, 8]}
weights:
  b: {shape: [8, 3], init: {uniform: [-1, 1]}}
nodes:
  - {op: MatMul, inputs: [a, b], outputs: [y]}
outputs: [y]
)")));
}

}  // namespace
}  // namespace tlmc::test
