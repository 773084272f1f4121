// Compile-time folding: constant subexpressions and Shape nodes become weights,
// BatchNormalization folds into the Conv before it or becomes a per-channel Mul and Add; the
// folded graph computes what the original does. Shape computations are done while the
// graph is read (frontend/compute_shapes.h), so that a Reshape's computed shape is a weight.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "frontend/compute_shapes.h"
#include "frontend/fold_constants.h"
#include "frontend/yaml_reader.h"
#include "ir/graph_verify.h"
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

// torch's x.view(x.size(0), -1), as exported.
const char* kViewChain = R"(inputs:
  x: {shape: [2, 3, 4, 5]}
weights:
  zero: {shape: [], dtype: int64, data: [0]}
  ax0: {shape: [1], dtype: int64, data: [0]}
  minus1: {shape: [1], dtype: int64, data: [-1]}
nodes:
  - {op: Shape, inputs: [x], outputs: [s]}
  - {op: Gather, inputs: [s, zero], outputs: [n]}
  - {op: Unsqueeze, inputs: [n, ax0], outputs: [n1]}
  - {op: Concat, inputs: [n1, minus1], outputs: [target], attrs: {axis: 0}}
  - {op: Reshape, inputs: [x, target], outputs: [flat]}
  - {op: Relu, inputs: [flat], outputs: [y]}
outputs: [y]
)";

TEST(ComputeShapes, ShapeGatherUnsqueezeConcatBecomesTheReshapesWeight) {
  ir::Graph g = read(kViewChain);
  EXPECT_EQ(ops(g), (std::vector<std::string>{"Reshape", "Relu"}));
  const ir::Tensor& target = g.tensor(g.nodes[0].inputs[1]);
  EXPECT_EQ(target.name, "target");
  EXPECT_EQ(target.kind, ir::TensorKind::Weight);
  EXPECT_EQ(ir::weight_ints(target), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(g.type(g.find_tensor("flat")).shape, (ir::Shape{2, 60}));
  // Folding then drops what nothing reads any more.
  ir::Graph f = fold_constants(g);
  EXPECT_EQ(ops(f), (std::vector<std::string>{"Reshape", "Relu"}));
  EXPECT_EQ(f.find_tensor("s"), -1);
  EXPECT_EQ(f.find_tensor("n1"), -1);
  EXPECT_LT(max_difference(g, f), 1e-7);
}

// Float results of weights are left to fold_constants (whose folding --check verifies);
// integer and bool ones are computed while reading.
TEST(ComputeShapes, OnlyIntegerAndBoolResultsAreComputedWhileReading) {
  ir::Graph g = read(R"(inputs:
  x: {shape: [3, 4]}
weights:
  dims: {shape: [2], dtype: int64, data: [3, 4]}
nodes:
  - {op: ConstantOfShape, inputs: [dims], outputs: [half], attrs: {value: 0.5}}
  - {op: ConstantOfShape, inputs: [dims], outputs: [ones], attrs: {value: 1, dtype: int64}}
  - {op: Cast, inputs: [ones], outputs: [onesf], attrs: {to: 1}}
  - {op: Mul, inputs: [x, half], outputs: [xh]}
  - {op: Add, inputs: [xh, onesf], outputs: [y]}
outputs: [y]
)");
  EXPECT_EQ(ops(g), (std::vector<std::string>{"ConstantOfShape", "Cast", "Mul", "Add"}));
  EXPECT_EQ(g.tensor(g.find_tensor("ones")).kind, ir::TensorKind::Weight);
  ir::Graph f = fold_constants(g);
  EXPECT_EQ(ops(f), (std::vector<std::string>{"Mul", "Add"}));
  EXPECT_LT(max_difference(g, f), 1e-7);
}

// A graph verified without computing shapes (another frontend, or a pass): fold_constants
// still turns Shape of any tensor into a weight, since every shape is static.
TEST(FoldConstants, ShapeOfAnyTensorIsAConstant) {
  ir::Graph g;
  g.name = "g";
  g.tensors.push_back(ir::Tensor{"x", {ir::DType::Float32, {2, 5}}, ir::TensorKind::Input, {}, {}});
  g.tensors.push_back(ir::Tensor{"r", {}, ir::TensorKind::Intermediate, {}, {}});
  g.tensors.push_back(ir::Tensor{"s", {}, ir::TensorKind::Intermediate, {}, {}});
  g.nodes.push_back(ir::Node{"", "Relu", {0}, {1}, {}, {}});
  g.nodes.push_back(ir::Node{"", "Shape", {1}, {2}, {}, {}});
  g.inputs = {0};
  g.outputs = {1, 2};
  g = ir::verify_graph(std::move(g));
  ASSERT_EQ(ops(g), (std::vector<std::string>{"Relu", "Shape"}));
  ir::Graph f = fold_constants(g);
  EXPECT_EQ(ops(f), std::vector<std::string>{"Relu"});
  const ir::Tensor& s = f.tensor(f.find_tensor("s"));
  EXPECT_EQ(s.kind, ir::TensorKind::Weight);
  EXPECT_EQ(ir::weight_ints(s), (std::vector<int64_t>{2, 5}));
}

// A Split of a weight folds into one weight per part.
TEST(FoldConstants, EveryOutputOfASplitBecomesAWeight) {
  ir::Graph g = read(R"(inputs:
  x: {shape: [2]}
weights:
  w: {shape: [6], data: [1, 2, 3, 4, 5, 6]}
nodes:
  - {op: Split, inputs: [w], outputs: [a, b, c]}
  - {op: Add, inputs: [x, a], outputs: [xa]}
  - {op: Mul, inputs: [xa, c], outputs: [y]}
outputs: [y, b]
)");
  ir::Graph f = fold_constants(g);
  EXPECT_EQ(ops(f), (std::vector<std::string>{"Add", "Mul"}));
  EXPECT_EQ(ir::weight_values(f.tensor(f.find_tensor("c"))), (std::vector<double>{5, 6}));
  EXPECT_EQ(f.tensor(f.find_tensor("b")).kind, ir::TensorKind::Weight);
  EXPECT_LT(max_difference(g, f), 1e-7);
}

// A shape the exporter computes wrongly is reported at the node that reads it.
TEST(ComputeShapes, ErrorsInComputedShapesPointAtTheReader) {
  try {
    read(R"(inputs:
  x: {shape: [2, 3]}
weights:
  seven: {shape: [1], dtype: int64, data: [7]}
nodes:
  - {op: Shape, inputs: [x], outputs: [s]}
  - {op: Concat, inputs: [s, seven], outputs: [t], attrs: {axis: 0}}
  - {op: Reshape, inputs: [x, t], outputs: [y]}
outputs: [y]
)");
    FAIL() << "no error";
  } catch (const Diagnostic& d) {
    EXPECT_EQ(d.format(),
              "g.yaml:10:5: error: Reshape cannot reshape input of shape [2, 3] (6 elements) to "
              "[2, 3, 7] (42 elements)");
  }
}

}  // namespace
}  // namespace tlmc::frontend
