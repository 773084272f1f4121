// A valid model becomes a verified graph: every tensor, node and attribute with its
// position, attribute defaults filled in, nodes in dependency order, types inferred.
#include <gtest/gtest.h>

#include <string>

#include "frontend/yaml_reader.h"
#include "support/test_support.h"

namespace tlmc::frontend {
namespace {

using ir::DType;
using ir::Shape;
using ir::TensorKind;

// The example of spec/graph-yaml.md, with the weight file it names.
const char* kTinyCnn = R"(tlmc: 1                       # format version, required
name: tiny_cnn                # C identifier; the prefix of the generated API
inputs:                       # graph inputs, in this order in the generated API
  image: {shape: [1, 3, 32, 32], dtype: float32}
weights:                      # constant tensors (ONNX initializers)
  conv1.w: {shape: [16, 3, 3, 3], init: {uniform: [-0.1, 0.1]}, seed: 1}
  conv1.b: {shape: [16], init: zeros}
  fc.w:    {shape: [10, 4096], file: tiny_cnn.bin, offset: 0}   # raw little-endian
  fc.b:    {shape: [10], data: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}
nodes:
  - {name: conv1, op: Conv, inputs: [image, conv1.w, conv1.b], outputs: [c1],
     attrs: {strides: [1, 1], pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c1], outputs: [r1]}
  - {op: MaxPool, inputs: [r1], outputs: [p1], attrs: {kernel_shape: [2, 2], strides: [2, 2]}}
  - {op: Flatten, inputs: [p1], outputs: [f1]}
  - {op: Gemm, inputs: [f1, fc.w, fc.b], outputs: [logits], attrs: {transB: 1}}
outputs: [logits]             # graph outputs, in this order in the generated API
)";

const ir::Tensor& tensor(const ir::Graph& g, const std::string& name) {
  const int id = g.find_tensor(name);
  EXPECT_GE(id, 0) << name;
  return g.tensor(id);
}

TEST(GoodModel, TheSpecExampleReadsCompletely) {
  test::TempDir dir;
  test::write_file(dir.file("tiny_cnn.bin"), std::string(10 * 4096 * 4, '\0'));
  test::write_file(dir.file("tiny_cnn.yaml"), kTinyCnn);
  const ir::Graph g = read_yaml_model(dir.file("tiny_cnn.yaml"));

  EXPECT_EQ(g.name, "tiny_cnn");
  EXPECT_EQ(g.opset, 17);
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.tensor(g.inputs[0]).name, "image");
  EXPECT_EQ(g.tensor(g.inputs[0]).kind, TensorKind::Input);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.tensor(g.outputs[0]).name, "logits");
  EXPECT_EQ(g.type(g.outputs[0]), (ir::TensorType{DType::Float32, Shape{1, 10}}));
  EXPECT_EQ(tensor(g, "c1").type.shape, (Shape{1, 16, 32, 32}));
  EXPECT_EQ(tensor(g, "p1").type.shape, (Shape{1, 16, 16, 16}));
  EXPECT_EQ(tensor(g, "f1").type.shape, (Shape{1, 4096}));
  EXPECT_EQ(tensor(g, "c1").kind, TensorKind::Intermediate);
  EXPECT_EQ(tensor(g, "fc.w").kind, TensorKind::Weight);
  EXPECT_EQ(tensor(g, "fc.w").data->size(), 10u * 4096 * 4);
  ASSERT_EQ(g.nodes.size(), 5u);
  EXPECT_EQ(g.nodes[0].describe(), "Conv 'conv1'");
  EXPECT_EQ(g.nodes[4].op, "Gemm");
}

TEST(GoodModel, PositionsAreRecorded) {
  test::TempDir dir;
  test::write_file(dir.file("tiny_cnn.bin"), std::string(10 * 4096 * 4, '\0'));
  const std::string path = dir.file("tiny_cnn.yaml");
  const ir::Graph g = read_yaml_text(kTinyCnn, path);
  auto pos = [](const SourceLoc& l) {
    return l.file + ":" + std::to_string(l.line) + ":" + std::to_string(l.column);
  };
  EXPECT_EQ(pos(tensor(g, "image").loc), path + ":4:3");                // the input's key
  EXPECT_EQ(pos(tensor(g, "conv1.b").loc), path + ":7:3");              // the weight's key
  EXPECT_EQ(pos(tensor(g, "c1").loc), path + ":11:74");                 // the name in `outputs`
  EXPECT_EQ(pos(g.nodes[0].loc), path + ":11:5");                       // the node's map
  EXPECT_EQ(pos(g.nodes[0].attrs.at("strides").loc), path + ":12:14");  // the attribute's key
}

TEST(GoodModel, NodesMayComeInAnyOrder) {
  const ir::Graph g = read_yaml_text(R"(tlmc: 1
name: m
inputs:
  x: {shape: [4]}
nodes:
  - {name: d, op: Add, inputs: [b, c], outputs: [y]}
  - {name: c, op: Relu, inputs: [a], outputs: [c]}
  - {name: b, op: Relu, inputs: [a], outputs: [b]}
  - {name: a, op: Relu, inputs: [x], outputs: [a]}
  - {name: e, op: Relu, inputs: [x], outputs: [e]}
outputs: [y, e]
)",
                                     "/nowhere/m.yaml");
  std::string order;
  for (const ir::Node& n : g.nodes) order += n.name;
  EXPECT_EQ(order, "acbde");  // dependencies first, otherwise the file's order
  EXPECT_EQ(tensor(g, "y").type.shape, (Shape{4}));
}

TEST(GoodModel, AttributesTakeTheirKindsAndDefaults) {
  const ir::Graph g = read_yaml_text(R"(tlmc: 1
name: m
inputs:
  x: {shape: [1, 3, 8, 8]}
  v: {shape: [2, 3]}
weights:
  w: {shape: [4, 3, 3, 3], init: ones}
  f: {shape: [4, 3], init: ones}
nodes:
  - {name: conv, op: Conv, inputs: [x, w], outputs: [c],
     attrs: {strides: [2, 2], auto_pad: SAME_UPPER}}
  - {name: gemm, op: Gemm, inputs: [v, f], outputs: [g], attrs: {alpha: 2, beta: 0.5, transB: 1}}
  - {name: leaky, op: LeakyRelu, inputs: [g], outputs: [l], attrs: {alpha: 1e-1}}
outputs: [c, l]
)",
                                     "/nowhere/m.yaml");
  const ir::Node& conv = g.nodes[0];
  EXPECT_EQ(conv.attr_ints("strides"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(conv.attr_string("auto_pad"), "SAME_UPPER");
  EXPECT_EQ(conv.attr_int("group"), 1);                            // default
  EXPECT_EQ(conv.attr_ints("dilations"), std::vector<int64_t>{});  // default: per axis
  EXPECT_EQ(tensor(g, "c").type.shape, (Shape{1, 4, 4, 4}));
  const ir::Node& gemm = g.nodes[1];
  EXPECT_EQ(gemm.attr_float("alpha"), 2.0);  // an integer where a float is expected
  EXPECT_EQ(gemm.attr_float("beta"), 0.5);
  EXPECT_EQ(gemm.attr_int("transB"), 1);
  EXPECT_EQ(gemm.attr_int("transA"), 0);  // default
  EXPECT_EQ(tensor(g, "g").type.shape, (Shape{2, 4}));
  EXPECT_EQ(g.nodes[2].attr_float("alpha"), 0.1);
}

TEST(GoodModel, OptionalInputsAndOutputsMayBeOmitted) {
  const ir::Graph g = read_yaml_text(R"(tlmc: 1
inputs:
  x: {shape: [2, 3]}
  z: {shape: [1, 3, 4, 4]}
weights:
  w: {shape: [3, 5], init: zeros}
  hi: {shape: [], data: [6]}
nodes:
  - {op: Gemm, inputs: [x, w, ""], outputs: [g]}
  - {op: Clip, inputs: [g, "", hi], outputs: [y]}
  - {op: MaxPool, inputs: [z], outputs: [p, ""], attrs: {kernel_shape: [2, 2]}}
outputs: [y, p]
)",
                                     "/nowhere/m.yaml");
  EXPECT_EQ(g.nodes[0].inputs[2], -1);
  EXPECT_EQ(g.nodes[1].inputs[1], -1);
  EXPECT_EQ(g.nodes[1].inputs[2], g.find_tensor("hi"));
  EXPECT_EQ(g.nodes[2].outputs.size(), 1u);  // a trailing omitted output is dropped
  EXPECT_EQ(tensor(g, "y").type.shape, (Shape{2, 5}));
  EXPECT_EQ(tensor(g, "p").type.shape, (Shape{1, 3, 3, 3}));
}

TEST(GoodModel, NameDefaultsToTheFileStemAsACIdentifier) {
  const char* text = "tlmc: 1\ninputs:\n  x: {shape: [1]}\nnodes: []\noutputs: [x]\n";
  EXPECT_EQ(read_yaml_text(text, "/d/3d-net.v2.yaml").name, "model_3d_net_v2");
  EXPECT_EQ(read_yaml_text(text, "/d/resnet50.yaml").name, "resnet50");
}

TEST(GoodModel, OpsetMayBeGiven) {
  const ir::Graph g = read_yaml_text(
      "tlmc: 1\nopset: 13\ninputs:\n  x: {shape: [1]}\nnodes: []\noutputs: [x]\n", "/d/m.yaml");
  EXPECT_EQ(g.opset, 13);
}

TEST(GoodModel, TensorNamesAreAnyString) {
  const ir::Graph g = read_yaml_text(R"(tlmc: 1
inputs:
  "a b/c:0": {shape: [2], dtype: float32}
  "1": {shape: [2]}
nodes:
  - {op: Add, inputs: ["a b/c:0", "1"], outputs: [résultat]}
outputs: [résultat]
)",
                                     "/d/m.yaml");
  EXPECT_EQ(g.tensor(g.inputs[0]).name, "a b/c:0");
  EXPECT_EQ(g.tensor(g.inputs[1]).name, "1");
  EXPECT_EQ(g.tensor(g.outputs[0]).name, "résultat");
}

TEST(GoodModel, GraphOutputMayBeAnInput) {
  const ir::Graph g = read_yaml_text(
      "tlmc: 1\ninputs:\n  x: {shape: [3], dtype: int8}\nnodes: []\noutputs: [x]\n", "/d/m.yaml");
  EXPECT_EQ(g.outputs, g.inputs);
  EXPECT_EQ(g.type(g.outputs[0]).dtype, DType::Int8);
}

}  // namespace
}  // namespace tlmc::frontend
