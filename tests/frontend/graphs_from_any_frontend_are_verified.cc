// verify_graph checks what a frontend might get wrong even where the YAML reader already
// prevents it (another frontend, or a pass, builds Graphs directly), and a verified graph
// verifies again unchanged.
#include <gtest/gtest.h>

#include <string>

#include "frontend/yaml_reader.h"
#include "ir/graph_verify.h"

namespace tlmc::ir {
namespace {

SourceLoc at(int line) { return SourceLoc{"g.onnx", line, 1}; }

// x [2] (Input) -> Relu -> y [?] (Intermediate), y the output.
Graph relu_graph() {
  Graph g;
  g.name = "g";
  g.tensors.push_back(
      Tensor{"x", TensorType{DType::Float32, {2}}, TensorKind::Input, nullptr, at(1)});
  g.tensors.push_back(Tensor{"y", TensorType{}, TensorKind::Intermediate, nullptr, at(2)});
  Node relu;
  relu.op = "Relu";
  relu.inputs = {0};
  relu.outputs = {1};
  relu.loc = at(3);
  g.nodes.push_back(relu);
  g.inputs = {0};
  g.outputs = {1};
  return g;
}

std::string error_of(Graph g) {
  try {
    verify_graph(std::move(g));
  } catch (const Diagnostic& d) {
    return d.format();
  }
  return "no error";
}

TEST(VerifyGraph, InfersIntermediateTypes) {
  const Graph g = verify_graph(relu_graph());
  EXPECT_EQ(g.type(1), (TensorType{DType::Float32, {2}}));
}

TEST(VerifyGraph, NodeWritingAGraphInput) {
  Graph g = relu_graph();
  g.nodes[0].outputs = {0};
  EXPECT_EQ(error_of(g),
            "g.onnx:3:1: error: Relu writes 'x', which is a graph input defined at g.onnx:1:1");
}

TEST(VerifyGraph, TensorNoNodeProduces) {
  Graph g = relu_graph();
  g.tensors.push_back(Tensor{"z", TensorType{}, TensorKind::Intermediate, nullptr, at(4)});
  EXPECT_EQ(error_of(g), "g.onnx:4:1: error: tensor 'z' is not produced by any node");
  g.nodes[0].inputs = {2};
  EXPECT_EQ(error_of(g), "g.onnx:3:1: error: Relu reads 'z', which no node produces");
}

TEST(VerifyGraph, TwoTensorsOfOneName) {
  Graph g = relu_graph();
  g.tensors[1].name = "x";
  EXPECT_EQ(error_of(g), "g.onnx:2:1: error: tensor 'x' is already defined at g.onnx:1:1");
}

TEST(VerifyGraph, WeightWithTheWrongNumberOfBytes) {
  Graph g = relu_graph();
  g.tensors.push_back(
      Tensor{"w", TensorType{DType::Float32, {3}}, TensorKind::Weight, float_bytes({1, 2}), at(5)});
  EXPECT_EQ(error_of(g),
            "g.onnx:5:1: error: weight 'w' has 8 bytes of data, but float32 [3] needs 12");
}

TEST(VerifyGraph, GraphOutputListedTwice) {
  Graph g = relu_graph();
  g.outputs = {1, 1};
  EXPECT_EQ(error_of(g), "g.onnx:2:1: error: tensor 'y' is listed twice as a graph output");
}

TEST(VerifyGraph, NameThatIsNotACIdentifier) {
  Graph g = relu_graph();
  g.name = "my-model";
  EXPECT_EQ(error_of(g), "tlmc: error: the model name 'my-model' is not a C identifier");
}

TEST(VerifyGraph, VerifiedGraphVerifiesAgainUnchanged) {
  const Graph once = frontend::read_yaml_text(R"(tlmc: 1
inputs:
  x: {shape: [1, 3, 8, 8]}
weights:
  w: {shape: [4, 3, 3, 3], init: {normal: 0.1}}
nodes:
  - {op: Relu, inputs: [c], outputs: [y]}
  - {op: Conv, inputs: [x, w], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
outputs: [y]
)",
                                              "/d/m.yaml");
  const Graph twice = verify_graph(once);
  ASSERT_EQ(twice.nodes.size(), once.nodes.size());
  for (size_t i = 0; i < once.nodes.size(); ++i) {
    EXPECT_EQ(twice.nodes[i].op, once.nodes[i].op);
    EXPECT_EQ(twice.nodes[i].attrs.size(), once.nodes[i].attrs.size());
  }
  for (size_t i = 0; i < once.tensors.size(); ++i)
    EXPECT_EQ(twice.tensors[i].type, once.tensors[i].type);
  EXPECT_EQ(once.nodes[0].op, "Conv");
}

}  // namespace
}  // namespace tlmc::ir
