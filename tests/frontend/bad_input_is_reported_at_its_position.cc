// Every kind of mistake spec/graph-yaml.md lists is a Diagnostic with an exact message at
// the offending YAML node's file:line:column.
#include <gtest/gtest.h>

#include <string>

#include "frontend/yaml_reader.h"
#include "ir/op_schema.h"
#include "support/test_support.h"

namespace tlmc::frontend {
namespace {

class BadInput : public ::testing::Test {
 protected:
  // The formatted Diagnostic reading `text` gives, or "no error".
  std::string error_of(const std::string& text) {
    try {
      read_yaml_text(text, path());
    } catch (const Diagnostic& d) {
      return d.format();
    }
    return "no error";
  }
  std::string path() const { return dir_.file("m.yaml"); }
  // "PATH:line:col: error: "
  std::string at(int line, int col) const {
    return path() + ":" + std::to_string(line) + ":" + std::to_string(col) + ": error: ";
  }
  // A model with input x [2, 3], the given weights and nodes block, and outputs [y].
  static std::string model(const std::string& weights, const std::string& nodes) {
    return "tlmc: 1\n"
           "inputs:\n"
           "  x: {shape: [2, 3]}\n" +
           weights + "nodes:\n" + nodes + "outputs: [y]\n";
  }

  test::TempDir dir_;
};

// --- The YAML itself and the top level -------------------------------------------------

TEST_F(BadInput, MalformedYamlIsReportedWhereTheParserStopped) {
  EXPECT_EQ(error_of("tlmc: 1\nnodes: [x\n"),
            at(3, 1) + "malformed YAML: end of sequence flow not found");
}

TEST_F(BadInput, EmptyFile) {
  EXPECT_EQ(error_of(""), at(1, 1) + "the file holds no model (it is empty)");
}

TEST_F(BadInput, ModelThatIsNotAMap) {
  EXPECT_EQ(error_of("- tlmc\n- 1\n"),
            at(1, 1) +
                "a model must be a YAML map with the keys tlmc, name, opset, inputs, "
                "weights, nodes, outputs");
}

TEST_F(BadInput, UnreadableModelFileHasNoLine) {
  const std::string missing = dir_.file("missing.yaml");
  try {
    read_yaml_model(missing);
    FAIL() << "no error";
  } catch (const Diagnostic& d) {
    EXPECT_EQ(d.format(), missing + ": error: cannot read the model: no such file");
  }
}

TEST_F(BadInput, MissingVersion) {
  EXPECT_EQ(error_of("name: m\nnodes: []\noutputs: [x]\n"),
            at(1, 1) + "the model is missing the key 'tlmc' (the format version: tlmc: 1)");
}

TEST_F(BadInput, UnsupportedVersion) {
  EXPECT_EQ(error_of("tlmc: 2\nnodes: []\noutputs: [x]\n"),
            at(1, 7) + "unsupported format version '2' (this compiler reads tlmc: 1)");
}

TEST_F(BadInput, EmptyVersionIsReportedAtItsKey) {
  EXPECT_EQ(error_of("tlmc:\nnodes: []\noutputs: [x]\n"),
            at(1, 1) + "unsupported format version (this compiler reads tlmc: 1)");
}

TEST_F(BadInput, UnknownTopLevelKey) {
  EXPECT_EQ(error_of("tlmc: 1\nnode: []\nnodes: []\noutputs: [x]\n"),
            at(2, 1) +
                "unknown key 'node' in the model (allowed: tlmc, name, opset, inputs, "
                "weights, nodes, outputs)");
}

TEST_F(BadInput, MissingRequiredTopLevelKey) {
  EXPECT_EQ(error_of("tlmc: 1\ninputs:\n  x: {shape: [1]}\nnodes: []\n"),
            at(1, 1) + "the model is missing the key 'outputs'");
}

TEST_F(BadInput, KeyGivenTwice) {
  EXPECT_EQ(error_of("tlmc: 1\nname: a\nname: b\nnodes: []\noutputs: [x]\n"),
            at(3, 1) + "key 'name' appears twice in the model (first at " + path() + ":2:1)");
}

TEST_F(BadInput, KeyWithoutValueIsReportedAtTheKey) {
  EXPECT_EQ(error_of("tlmc: 1\ninputs:\nnodes: []\noutputs: [x]\n"),
            at(2, 1) + "key 'inputs' has no value");
}

TEST_F(BadInput, NameThatIsNotACIdentifier) {
  EXPECT_EQ(error_of("tlmc: 1\nname: tiny-cnn\nnodes: []\noutputs: [x]\n"),
            at(2, 7) +
                "the model name 'tiny-cnn' is not a C identifier (letters, digits and "
                "'_', not starting with a digit)");
}

TEST_F(BadInput, OpsetOutOfRange) {
  EXPECT_EQ(error_of("tlmc: 1\nopset: 12\nnodes: []\noutputs: [x]\n"),
            at(2, 8) + "opset 12 is not supported (only 13 to 17)");
}

TEST_F(BadInput, NoOutputs) {
  EXPECT_EQ(error_of("tlmc: 1\ninputs:\n  x: {shape: [1]}\nnodes: []\noutputs: []\n"),
            at(5, 10) + "the model has no outputs");
}

// --- Inputs -------------------------------------------------------------------------------

TEST_F(BadInput, UnknownKeyInAnInput) {
  EXPECT_EQ(error_of("tlmc: 1\ninputs:\n  x: {shape: [2], dtyp: int64}\nnodes: []\n"
                     "outputs: [x]\n"),
            at(3, 19) + "unknown key 'dtyp' in input 'x' (allowed: shape, dtype)");
}

TEST_F(BadInput, InputWithoutShape) {
  EXPECT_EQ(error_of("tlmc: 1\ninputs:\n  x: {dtype: int64}\nnodes: []\noutputs: [x]\n"),
            at(3, 6) + "input 'x' is missing the key 'shape'");
}

TEST_F(BadInput, ShapeThatIsNotAList) {
  EXPECT_EQ(error_of("tlmc: 1\ninputs:\n  x: {shape: 3}\nnodes: []\noutputs: [x]\n"),
            at(3, 14) + "a shape must be a list of non-negative integers");
}

TEST_F(BadInput, NegativeDimensionIsReportedAtTheDimension) {
  EXPECT_EQ(error_of("tlmc: 1\ninputs:\n  x: {shape: [2, -1]}\nnodes: []\noutputs: [x]\n"),
            at(3, 18) + "a shape must be a list of non-negative integers");
}

TEST_F(BadInput, UnknownDtype) {
  EXPECT_EQ(error_of("tlmc: 1\ninputs:\n  x: {shape: [2], dtype: uint16}\nnodes: []\n"
                     "outputs: [x]\n"),
            at(3, 26) +
                "unknown dtype 'uint16' (allowed: float32, float16, bfloat16, int32, "
                "int64, int8, uint8, bool, float64)");
}

// --- Nodes and operators ------------------------------------------------------------------

TEST_F(BadInput, UnknownKeyInANode) {
  EXPECT_EQ(
      error_of(model("", "  - {op: Relu, input: [x], outputs: [y]}\n")),
      at(5, 16) + "unknown key 'input' in a node (allowed: name, op, inputs, outputs, attrs)");
}

TEST_F(BadInput, NodeWithoutOp) {
  EXPECT_EQ(error_of(model("", "  - {inputs: [x], outputs: [y]}\n")),
            at(5, 5) + "a node is missing the key 'op'");
}

TEST_F(BadInput, UnknownOperatorListsTheSupportedOnes) {
  EXPECT_EQ(error_of(model("", "  - {op: Foo, inputs: [x], outputs: [y]}\n")),
            at(5, 5) + "unknown operator 'Foo' (supported: " + ir::supported_op_list() + ")");
  EXPECT_NE(ir::supported_op_list().find("MatMul"), std::string::npos);
}

TEST_F(BadInput, OperatorNewerThanTheModelsOpset) {
  EXPECT_EQ(error_of("tlmc: 1\nopset: 13\ninputs:\n  x: {shape: [2, 3]}\nweights:\n"
                     "  s: {shape: [3], init: ones}\nnodes:\n"
                     "  - {name: ln, op: LayerNormalization, inputs: [x, s], outputs: [y]}\n"
                     "outputs: [y]\n"),
            at(8, 5) +
                "LayerNormalization 'ln' needs opset 17 or newer, but the model uses "
                "opset 13");
}

TEST_F(BadInput, TooManyInputs) {
  EXPECT_EQ(error_of(model("", "  - {name: r, op: Relu, inputs: [x, x], outputs: [y]}\n")),
            at(5, 5) + "Relu 'r' takes 1 input, got 2");
}

TEST_F(BadInput, TooFewInputs) {
  EXPECT_EQ(error_of(model("", "  - {op: Gemm, inputs: [x], outputs: [y]}\n")),
            at(5, 5) + "Gemm takes 2 to 3 inputs, got 1");
  EXPECT_EQ(error_of(model("", "  - {op: Concat, outputs: [y], attrs: {axis: 0}}\n")),
            at(5, 5) + "Concat takes at least 1 input, got 0");
}

TEST_F(BadInput, RequiredInputOmitted) {
  EXPECT_EQ(error_of(model("", "  - {name: mm, op: MatMul, inputs: [x, \"\"], outputs: [y]}\n")),
            at(5, 5) + "input 1 of MatMul 'mm' is required and cannot be omitted");
}

TEST_F(BadInput, RequiredOutputOmitted) {
  EXPECT_EQ(error_of(model("",
                           "  - {op: Relu, inputs: [x], outputs: [\"\"]}\n"
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 5) + "output 0 of Relu is required and cannot be omitted");
}

TEST_F(BadInput, UnknownAttribute) {
  EXPECT_EQ(error_of(model("",
                           "  - {name: r, op: Relu, inputs: [x], outputs: [y],\n"
                           "     attrs: {foo: 1}}\n")),
            at(6, 14) + "Relu 'r' has no attribute 'foo' (it takes none)");
  EXPECT_EQ(
      error_of(model("weights:\n  w: {shape: [3, 3], init: ones}\n",
                     "  - {op: Gemm, inputs: [x, w], outputs: [y], attrs: {transC: 1}}\n")),
      at(7, 54) +
          "Gemm has no attribute 'transC' (it has: alpha, beta, transA, transB, float32_output)");
}

// tlmc's own attribute of Conv and the pools: 0 (ONNX's [N, C, spatial...]) or 1.
TEST_F(BadInput, ChannelsLastIsZeroOrOne) {
  EXPECT_EQ(
      error_of("tlmc: 1\n"
               "inputs:\n"
               "  x: {shape: [1, 3, 4, 4]}\n"
               "weights:\n"
               "  w: {shape: [4, 3, 1, 1], init: ones}\n"
               "nodes:\n"
               "  - {name: c1, op: Conv, inputs: [x, w], outputs: [y], attrs: {channels_last: 2}}\n"
               "outputs: [y]\n"),
      at(7, 5) + "Conv 'c1' has channels_last 2 (expected 0 or 1)");
}

// tlmc's channel_block: 0, or B >= 2 with the input's last dimension B; not beside
// channels_last; whole blocks of output channels; no Indices output from a pool in a layout
// of tlmc's own.
TEST_F(BadInput, ChannelBlocksMustFitTheTensors) {
  auto conv = [](const std::string& x, const std::string& w, const std::string& attrs) {
    return "tlmc: 1\ninputs:\n  x: {shape: " + x + "}\nweights:\n  w: {shape: " + w +
           ", init: ones}\nnodes:\n  - {name: c1, op: Conv, inputs: [x, w], outputs: [y], "
           "attrs: {" +
           attrs + "}}\noutputs: [y]\n";
  };
  EXPECT_EQ(error_of(conv("[1, 2, 4, 4, 8]", "[16, 16, 1, 1]", "channel_block: 1")),
            at(7, 5) + "Conv 'c1' has channel_block 1 (expected 0, or 2 to 4096)");
  EXPECT_EQ(error_of(conv("[1, 2, 4, 4, 8]", "[16, 16, 1, 1]", "channel_block: 4")),
            at(7, 5) +
                "Conv 'c1' has channel_block 4, so input X must be [N, C/4, spatial..., 4], "
                "got [1, 2, 4, 4, 8]");
  EXPECT_EQ(
      error_of(conv("[1, 2, 4, 4, 8]", "[16, 16, 1, 1]", "channel_block: 8, channels_last: 1")),
      at(7, 5) + "Conv 'c1' has both channels_last and channel_block; it may have one of them");
  EXPECT_EQ(error_of(conv("[1, 2, 4, 4, 8]", "[12, 16, 1, 1]", "channel_block: 8")),
            at(7, 5) + "Conv 'c1' has 12 output channels, not a multiple of its channel_block 8");
  EXPECT_EQ(error_of("tlmc: 1\ninputs:\n  x: {shape: [1, 2, 4, 4, 8]}\nnodes:\n"
                     "  - {name: p, op: MaxPool, inputs: [x], outputs: [y, i],\n"
                     "     attrs: {kernel_shape: [2, 2], channel_block: 8}}\n"
                     "outputs: [y, i]\n"),
            at(5, 5) +
                "MaxPool 'p' has a second output (Indices) and tlmc's channels_last or "
                "channel_block; Indices are computed in ONNX's layout only: drop the attribute "
                "or the output");
}

TEST_F(BadInput, AttributeOfTheWrongKind) {
  const std::string weights = "weights:\n  w: {shape: [4, 3, 1, 1], init: ones}\n";
  EXPECT_EQ(error_of(model(weights,
                           "  - {name: c1, op: Conv, inputs: [x, w], outputs: [y],\n"
                           "     attrs: {strides: same}}\n")),
            at(8, 14) +
                "attribute 'strides' of Conv 'c1' must be a list of integers, not a "
                "string");
  EXPECT_EQ(error_of(model(weights,
                           "  - {name: c1, op: Conv, inputs: [x, w], outputs: [y],\n"
                           "     attrs: {strides: [1.5, 1]}}\n")),
            at(8, 14) +
                "attribute 'strides' of Conv 'c1' must be a list of integers, not a "
                "list of numbers");
  EXPECT_EQ(error_of(model(weights,
                           "  - {name: g, op: Gemm, inputs: [x, w], outputs: [y],\n"
                           "     attrs: {transB: 1.0}}\n")),
            at(8, 14) + "attribute 'transB' of Gemm 'g' must be an integer, not a number");
}

TEST_F(BadInput, QuotedNumberIsAString) {
  EXPECT_EQ(
      error_of(model("weights:\n  w: {shape: [3, 3], init: ones}\n",
                     "  - {op: Gemm, inputs: [x, w], outputs: [y], attrs: {transB: \"1\"}}\n")),
      at(7, 54) + "attribute 'transB' of Gemm must be an integer, not a string");
}

TEST_F(BadInput, ListAttributeHoldingText) {
  EXPECT_EQ(error_of(model("", "  - {op: Relu, inputs: [x], outputs: [y], attrs: {a: [1, b]}}\n")),
            at(5, 58) + "a list attribute holds numbers only; attribute 'a' holds 'b'");
}

TEST_F(BadInput, RequiredAttributeMissing) {
  EXPECT_EQ(error_of(model("", "  - {name: cat, op: Concat, inputs: [x, x], outputs: [y]}\n")),
            at(5, 5) + "Concat 'cat' needs the attribute 'axis' (an integer)");
}

TEST_F(BadInput, ShapeThatDoesNotFitTheOperator) {
  const std::string e =
      error_of(model("weights:\n  w: {shape: [4, 5], init: zeros}\n",
                     "  - {name: mm, op: MatMul, inputs: [x, w], outputs: [y]}\n"));
  EXPECT_EQ(e.rfind(at(7, 5), 0), 0u) << e;
  EXPECT_NE(e.find("MatMul"), std::string::npos) << e;
}

TEST_F(BadInput, DtypeTheOperatorDoesNotSupport) {
  const std::string e = error_of(
      "tlmc: 1\ninputs:\n  x: {shape: [2], dtype: int64}\nnodes:\n"
      "  - {op: Relu, inputs: [x], outputs: [y]}\noutputs: [y]\n");
  EXPECT_EQ(e.rfind(at(5, 5), 0), 0u) << e;
  EXPECT_NE(e.find("Relu"), std::string::npos) << e;
}

// --- Tensor names ------------------------------------------------------------------------

TEST_F(BadInput, UndefinedTensorIsReportedWhereItIsUsed) {
  EXPECT_EQ(error_of(model("", "  - {op: Relu, inputs: [z], outputs: [y]}\n")),
            at(5, 25) +
                "tensor 'z' is not defined: it is not an input, a weight or a node "
                "output");
}

TEST_F(BadInput, UndefinedGraphOutput) {
  EXPECT_EQ(error_of("tlmc: 1\ninputs:\n  x: {shape: [1]}\nnodes: []\noutputs: [x, q]\n"),
            at(5, 14) +
                "tensor 'q' is not defined: it is not an input, a weight or a node "
                "output");
}

TEST_F(BadInput, TensorDefinedTwiceAsInputAndWeight) {
  EXPECT_EQ(error_of(model("weights:\n  x: {shape: [2, 3], init: zeros}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 3) + "tensor 'x' is already defined at " + path() + ":3:3");
}

TEST_F(BadInput, TensorProducedByTwoNodes) {
  EXPECT_EQ(error_of(model("",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n"
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(6, 39) + "tensor 'y' is already defined at " + path() + ":5:39");
}

TEST_F(BadInput, NodeOverwritingAnInput) {
  EXPECT_EQ(error_of(model("", "  - {op: Relu, inputs: [x], outputs: [x]}\n")),
            at(5, 39) + "tensor 'x' is already defined at " + path() + ":3:3");
}

TEST_F(BadInput, GraphOutputListedTwice) {
  EXPECT_EQ(
      error_of("tlmc: 1\ninputs:\n  x: {shape: [1]}\nnodes: []\noutputs: [x, x]\n"),
      at(5, 14) + "tensor 'x' is listed twice as a graph output (first at " + path() + ":5:11)");
}

TEST_F(BadInput, CycleNamesItsTensors) {
  EXPECT_EQ(error_of(model("",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n"
                           "  - {name: a, op: Relu, inputs: [t2], outputs: [t1]}\n"
                           "  - {name: b, op: Relu, inputs: [t1], outputs: [t2]}\n")),
            at(6, 5) + "Relu 'a' is on a cycle: 't1' -> 't2' -> 't1'");
}

TEST_F(BadInput, CycleFedFromOutsideIsReportedAtItsFirstNode) {
  EXPECT_EQ(error_of(model("",
                           "  - {name: c, op: Relu, inputs: [t2], outputs: [t3]}\n"
                           "  - {name: a, op: Add, inputs: [x, t3], outputs: [t1]}\n"
                           "  - {name: b, op: Relu, inputs: [t1], outputs: [t2]}\n"
                           "  - {op: Relu, inputs: [t3], outputs: [y]}\n")),
            at(5, 5) + "Relu 'c' is on a cycle: 't3' -> 't1' -> 't2' -> 't3'");
}

TEST_F(BadInput, NodeReadingItsOwnOutput) {
  EXPECT_EQ(error_of(model("", "  - {name: s, op: Add, inputs: [x, y], outputs: [y]}\n")),
            at(5, 5) + "Add 's' is on a cycle: 'y' -> 'y'");
}

// --- Weights -----------------------------------------------------------------------------

TEST_F(BadInput, UnknownKeyInAWeight) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [2], init: zeros, sede: 1}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 32) +
                "unknown key 'sede' in weight 'w' (allowed: shape, dtype, init, data, "
                "file, seed, offset)");
}

TEST_F(BadInput, WeightWithoutSource) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [2]}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 6) + "weight 'w' needs one of init, data, file");
}

TEST_F(BadInput, WeightWithTwoSources) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [2], init: zeros, data: [1, 2]}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 32) +
                "weight 'w' has both 'init' and 'data': give exactly one of init, "
                "data, file");
}

TEST_F(BadInput, SeedWithoutInit) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [2], data: [1, 2], seed: 3}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 33) + "'seed' goes with 'init', not with 'data'");
}

TEST_F(BadInput, OffsetWithoutFile) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [2], init: ones, offset: 8}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 31) + "'offset' goes with 'file', not with 'init'");
}

TEST_F(BadInput, UnknownInit) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [2], init: random}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 25) + "init must be zeros, ones, {uniform: [lo, hi]} or {normal: stddev}");
}

TEST_F(BadInput, RandomInitOfAnIntegerWeight) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [2], dtype: int64, init: {uniform: [0, 9]}}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 40) + "weight 'w': 'uniform' init needs a float dtype, not int64");
}

TEST_F(BadInput, UniformBoundsInTheWrongOrder) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [2], init: {uniform: [1, -1]}}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 35) + "uniform takes [lo, hi] with finite lo <= hi");
}

TEST_F(BadInput, DataOfTheWrongLength) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [2, 3], data: [1, 2]}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 28) + "weight 'w' has shape [2, 3] (6 elements) but data has 2 values");
}

TEST_F(BadInput, DataValueThatDoesNotFitTheDtype) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [2], dtype: int8, data: [1, 300]}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 42) + "'300' does not fit in int8");
}

TEST_F(BadInput, FractionInIntegerData) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [1], dtype: int64, data: [1.5]}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 40) + "int64 data must be integers, not '1.5'");
}

TEST_F(BadInput, TextInFloatData) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [2], data: [1, two]}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 29) + "a data value must be a number");
}

TEST_F(BadInput, MissingWeightFileIsReportedAtTheFileName) {
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [2], file: w.bin}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 25) + "weight 'w': its file names 'w.bin', which does not exist (looked for '" +
                dir_.file("w.bin") + "')");
}

TEST_F(BadInput, WeightFileTooShortSaysHowManyBytes) {
  test::write_file(dir_.file("w.bin"), std::string(10, '\0'));
  EXPECT_EQ(error_of(model("weights:\n  w: {shape: [4], file: w.bin, offset: 4}\n",
                           "  - {op: Relu, inputs: [x], outputs: [y]}\n")),
            at(5, 25) +
                "weight file 'w.bin' is too short: weight 'w' needs 20 bytes (offset 4 "
                "+ 16) but the file has 10");
}

// --- Numeric limits (docs/driver.md) -----------------------------------------------------

// A 4x4 image and a 3x3 kernel, with the given Conv line.
std::string conv_model(const std::string& node) {
  return "tlmc: 1\n"
         "inputs:\n"
         "  x: {shape: [1, 1, 4, 4]}\n"
         "weights:\n"
         "  w: {shape: [1, 1, 3, 3], init: zeros}\n"
         "nodes:\n" +
         node + "\noutputs: [y]\n";
}

// Regression: pads of 2^40 compiled and exited 0.
TEST_F(BadInput, AttributeBeyondTheLimitIsReportedAtItsValue) {
  EXPECT_EQ(
      error_of(conv_model(
          "  - {op: Conv, inputs: [x, w], outputs: [y], attrs: {pads: [1099511627776, 0, 0, 0]}}")),
      at(7, 54) +
          "attribute 'pads' of Conv has the value 1099511627776, beyond tlmc's "
          "limit of +-(2^31 - 1)");
}

TEST_F(BadInput, InferredShapeBeyondTheLimitIsReportedAtItsNode) {
  EXPECT_EQ(error_of(conv_model("  - {name: c, op: Conv, inputs: [x, w], outputs: [y], attrs: "
                                "{pads: [1073741824, 0, 1073741824, 0]}}")),
            at(7, 5) +
                "tensor 'y' of shape [1, 1, 2147483650, 2] is beyond tlmc's limits: its axis 2 "
                "is 2147483650, beyond the largest extent tlmc compiles (2^31 - 1)");
}

TEST_F(BadInput, DeclaredShapeBeyondTheLimitIsReportedAtTheAxis) {
  EXPECT_EQ(error_of("tlmc: 1\ninputs:\n  x: {shape: [2, 65536, 65536]}\n"
                     "nodes:\n  - {op: Relu, inputs: [x], outputs: [y]}\noutputs: [y]\n"),
            at(3, 25) +
                "shape [2, 65536, 65536]... is beyond tlmc's limits: it has more elements than "
                "the largest tensor tlmc compiles (2^32)");
}

}  // namespace
}  // namespace tlmc::frontend
