// Compile-time folding: constant subexpressions become weights, BatchNormalization folds
// into the Conv before it or becomes a per-channel Mul and Add; the folded graph computes
// what the original does.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "frontend/fold_constants.h"
#include "frontend/yaml_reader.h"
#include "reference/interpreter.h"

namespace tlmc::frontend {
namespace {

ir::Graph read(const std::string& body) {
  return read_yaml_text("tlmc: 1\nname: g\n" + body, "g.yaml");
}

std::vector<std::string> ops(const ir::Graph& g) {
  std::vector<std::string> out;
  for (const ir::Node& n : g.nodes) out.push_back(n.op);
  return out;
}

// Runs both graphs on the same random inputs; returns the largest absolute difference.
double max_difference(const ir::Graph& a, const ir::Graph& b) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<reference::HostTensor> inputs;
  for (int t : a.inputs) {
    inputs.push_back(reference::HostTensor::zeros(a.type(t)));
    for (int64_t i = 0; i < a.type(t).numel(); ++i) inputs.back().f32()[i] = u(rng);
  }
  std::vector<reference::HostTensor> x = reference::interpret(a, inputs),
                                     y = reference::interpret(b, inputs);
  double worst = 0;
  for (size_t o = 0; o < x.size(); ++o)
    for (int64_t i = 0; i < x[o].type.numel(); ++i)
      worst = std::max(worst, std::fabs(double(x[o].f32()[i]) - y[o].f32()[i]));
  return worst;
}

const char* kParams = R"(  s: {shape: [4], init: {uniform: [0.5, 1.5]}, seed: 1}
  b: {shape: [4], init: {uniform: [-1, 1]}, seed: 2}
  m: {shape: [4], init: {uniform: [-1, 1]}, seed: 3}
  v: {shape: [4], init: {uniform: [0.5, 1.5]}, seed: 4}
  w: {shape: [4, 3, 3, 3], init: {uniform: [-1, 1]}, seed: 5}
  cb: {shape: [4], init: {uniform: [-1, 1]}, seed: 6}
)";

TEST(FoldConstants, BatchNormFoldsIntoTheConvBeforeIt) {
  ir::Graph g =
      read(std::string("inputs:\n  x: {shape: [1, 3, 7, 7]}\nweights:\n") + kParams + R"(nodes:
  - {op: Conv, inputs: [x, w, cb], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
  - {op: BatchNormalization, inputs: [c, s, b, m, v], outputs: [y], attrs: {epsilon: 0.01}}
outputs: [y]
)");
  ir::Graph f = fold_constants(g);
  EXPECT_EQ(ops(f), std::vector<std::string>{"Conv"});
  EXPECT_EQ(f.find_tensor("c"), -1) << "the raw convolution result is gone";
  EXPECT_LT(max_difference(g, f), 1e-5);
}

TEST(FoldConstants, BatchNormWithoutAConvBecomesMulAndAdd) {
  ir::Graph g =
      read(std::string("inputs:\n  x: {shape: [2, 4, 5, 5]}\nweights:\n") + kParams + R"(nodes:
  - {op: Relu, inputs: [x], outputs: [r]}
  - {op: BatchNormalization, inputs: [r, s, b, m, v], outputs: [y]}
outputs: [y]
)");
  ir::Graph f = fold_constants(g);
  EXPECT_EQ(ops(f), (std::vector<std::string>{"Relu", "Mul", "Add"}));
  EXPECT_EQ(f.type(f.find_tensor("y.scale")).shape, (ir::Shape{4, 1, 1}));
  EXPECT_LT(max_difference(g, f), 1e-5);
}

TEST(FoldConstants, ConvReadTwiceKeepsItsOwnResult) {
  ir::Graph g =
      read(std::string("inputs:\n  x: {shape: [1, 3, 6, 6]}\nweights:\n") + kParams + R"(nodes:
  - {op: Conv, inputs: [x, w], outputs: [c]}
  - {op: BatchNormalization, inputs: [c, s, b, m, v], outputs: [y]}
  - {op: Relu, inputs: [c], outputs: [z]}
outputs: [y, z]
)");
  ir::Graph f = fold_constants(g);
  EXPECT_EQ(ops(f), (std::vector<std::string>{"Conv", "Mul", "Add", "Relu"}));
  EXPECT_LT(max_difference(g, f), 1e-5);
}

TEST(FoldConstants, NodesOfWeightsBecomeWeights) {
  ir::Graph g = read(R"(inputs:
  x: {shape: [2, 3]}
weights:
  a: {shape: [3, 4], init: {uniform: [-1, 1]}, seed: 1}
  b: {shape: [4], init: {uniform: [-1, 1]}, seed: 2}
nodes:
  - {op: Add, inputs: [a, b], outputs: [ab]}
  - {op: Exp, inputs: [ab], outputs: [e]}
  - {op: MatMul, inputs: [x, e], outputs: [y]}
outputs: [y]
)");
  ir::Graph f = fold_constants(g);
  EXPECT_EQ(ops(f), std::vector<std::string>{"MatMul"});
  EXPECT_EQ(f.tensor(f.find_tensor("e")).kind, ir::TensorKind::Weight);
  EXPECT_LT(max_difference(g, f), 1e-6);
}

}  // namespace
}  // namespace tlmc::frontend
