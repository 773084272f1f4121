// --precision bf16's graph pass: the operands of matrix products become bfloat16 (weights
// converted now, rounded to nearest even; an activation through one Cast node however many
// products read it), everything else and the graph's inputs and outputs stay float32.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "frontend/reduced_precision.h"
#include "frontend/yaml_reader.h"
#include "ir/diagnostic.h"
#include "reference/interpreter.h"

namespace tlmc::frontend {
namespace {

const char* kModel = R"(
tlmc: 1
name: two
inputs:
  x: {shape: [2, 4]}
weights:
  w: {shape: [4, 3], data: [1.00390625, 1.01171875, -2.0, 0.1, 1, 1, 1, 1, 1, 1, 1, 1]}
  v: {shape: [3, 2], init: {uniform: [-1, 1]}, seed: 1}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h], name: first}
  - {op: Relu, inputs: [h], outputs: [r]}
  - {op: MatMul, inputs: [r, v], outputs: [y], name: second}
  - {op: Gemm, inputs: [x, w], outputs: [z], name: third}
outputs: [y, z]
)";

const ir::Node& node_named(const ir::Graph& g, const std::string& name) {
  for (const ir::Node& n : g.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node " + name);
}

TEST(ReducedPrecision, ProductOperandsBecomeBf16AndTheRestStaysFloat32) {
  const ir::Graph g = demote_products_to_bf16(read_yaml_text(kModel, "two.yaml"), {});
  const ir::Node& first = node_named(g, "first");
  const ir::Tensor& x16 = g.tensor(first.inputs[0]);
  const ir::Tensor& w16 = g.tensor(first.inputs[1]);
  EXPECT_EQ(x16.name, "x.bf16");
  EXPECT_EQ(x16.type, (ir::TensorType{ir::DType::BFloat16, {2, 4}}));
  EXPECT_EQ(w16.kind, ir::TensorKind::Weight);
  EXPECT_EQ(w16.type.dtype, ir::DType::BFloat16);
  // Rounded to nearest even: 1 + 2^-8 is a tie that goes down to 1, 1 + 3 * 2^-8 one that
  // goes up to 1 + 2^-6; 0.1 becomes 0.10009765625.
  uint16_t bits[4];
  std::memcpy(bits, w16.data->data(), sizeof bits);
  EXPECT_EQ(bits[0], 0x3f80);
  EXPECT_EQ(bits[1], 0x3f82);
  EXPECT_EQ(bits[2], 0xc000);
  EXPECT_EQ(bits[3], 0x3dcd);
  // x feeds two products through one Cast; the float32 weight w is gone.
  EXPECT_EQ(node_named(g, "third").inputs[0], first.inputs[0]);
  EXPECT_EQ(node_named(g, "third").inputs[1], first.inputs[1]);
  EXPECT_EQ(g.find_tensor("w"), -1);
  int casts = 0;
  for (const ir::Node& n : g.nodes) casts += n.op == "Cast";
  EXPECT_EQ(casts, 2) << "x and r";
  // The products still output float32, as do the graph's outputs; its input is float32.
  EXPECT_EQ(g.type(first.outputs[0]).dtype, ir::DType::Float32);
  for (int t : g.outputs) EXPECT_EQ(g.type(t).dtype, ir::DType::Float32);
  EXPECT_EQ(g.type(g.inputs[0]).dtype, ir::DType::Float32);
}

// The products in series that --check's tolerance counts: y is reached through first and
// second, z through third alone; a product kept in float32 does not count.
TEST(ReducedPrecision, ProductsInSeriesAreCountedPerOutput) {
  const ir::Graph g = demote_products_to_bf16(read_yaml_text(kModel, "two.yaml"), {});
  EXPECT_EQ(bf16_products_in_series(g), (std::vector<int>{2, 1}));
  PrecisionOptions keep;
  keep.keep_fp32 = {"second", "third"};
  const ir::Graph k = demote_products_to_bf16(read_yaml_text(kModel, "two.yaml"), keep);
  EXPECT_EQ(bf16_products_in_series(k), (std::vector<int>{1, 0}));
  EXPECT_EQ(bf16_products_in_series(read_yaml_text(kModel, "two.yaml")), (std::vector<int>{0, 0}));
}

// Convolutions that are matrix products (1 x 1, stride 1, no padding, one group) are demoted
// with the matrix products, and so are depthwise ones (one input channel per group: their
// input stored in bfloat16) and windows over 8 channels, whose 3 columns become 24 channels
// (AStemsWindowColumnsBecomeChannelsExactly); the others (1 x 1 with a stride or padding,
// over fewer than 16 channels) stay float32.
TEST(ReducedPrecision, ConvolutionsTheUnitTakesAreDemoted) {
  const ir::Graph g = demote_products_to_bf16(read_yaml_text(R"(tlmc: 1
name: convs
inputs:
  x: {shape: [1, 8, 6, 6]}
weights:
  p: {shape: [8, 8, 1, 1], init: {uniform: [-1, 1]}, seed: 1}
  t: {shape: [8, 8, 3, 3], init: {uniform: [-1, 1]}, seed: 2}
  d: {shape: [8, 1, 1, 1], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: Conv, inputs: [x, p], outputs: [a], name: pointwise}
  - {op: Conv, inputs: [a, t], outputs: [b], name: taps, attrs: {pads: [1, 1, 1, 1]}}
  - {op: Conv, inputs: [b, p], outputs: [c], name: strided, attrs: {strides: [2, 2]}}
  - {op: Conv, inputs: [c, d], outputs: [e], name: grouped, attrs: {group: 8}}
  - {op: Conv, inputs: [e, p], outputs: [y], name: padded, attrs: {pads: [1, 1, 1, 1]}}
outputs: [y]
)",
                                                             "convs.yaml"),
                                              {});
  EXPECT_EQ(g.type(node_named(g, "pointwise").inputs[0]).dtype, ir::DType::BFloat16);
  EXPECT_EQ(g.type(node_named(g, "pointwise").inputs[1]).dtype, ir::DType::BFloat16);
  EXPECT_EQ(g.type(node_named(g, "pointwise").outputs[0]).dtype, ir::DType::Float32);
  EXPECT_EQ(g.type(node_named(g, "grouped").inputs[0]).dtype, ir::DType::BFloat16);
  EXPECT_EQ(g.type(node_named(g, "grouped").inputs[1]).dtype, ir::DType::BFloat16);
  EXPECT_EQ(g.type(node_named(g, "grouped").outputs[0]).dtype, ir::DType::Float32);
  EXPECT_EQ(g.type(node_named(g, "taps").inputs[0]).shape, (ir::Shape{1, 24, 8, 6}));
  EXPECT_EQ(g.type(node_named(g, "taps").inputs[0]).dtype, ir::DType::BFloat16);
  for (const char* kept : {"strided", "padded"})
    EXPECT_EQ(g.type(node_named(g, kept).inputs[0]).dtype, ir::DType::Float32) << kept;
}

// A convolution over few channels (an image's stem) has its window's columns folded into
// channels, so that the unit takes steps of KW * C values: exactly the same sums, checked on
// small integers (exact in bfloat16 and in every sum) at odd sizes, strides, dilations,
// uneven padding, none, and auto_pad; where KW * C < 16 or KW > 7 it stays float32, as does
// one kept in float32 or with --precision-ops matmul.
TEST(ReducedPrecision, AStemsWindowColumnsBecomeChannelsExactly) {
  ir::Graph g = read_yaml_text(R"(tlmc: 1
name: stems
inputs:
  x: {shape: [2, 4, 13, 17]}
  z: {shape: [1, 3, 10, 9]}
weights:
  w: {shape: [6, 4, 3, 5], init: {uniform: [-1, 1]}, seed: 1}
  b: {shape: [6], init: {uniform: [-1, 1]}, seed: 2}
  v: {shape: [8, 3, 7, 7], init: {uniform: [-1, 1]}, seed: 3}
  u: {shape: [8, 3, 3, 3], init: {uniform: [-1, 1]}, seed: 4}
  a: {shape: [4, 3, 3, 6], init: {uniform: [-1, 1]}, seed: 5}
  e: {shape: [4, 3, 2, 8], init: {uniform: [-1, 1]}, seed: 6}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [y], name: odd, attrs: {strides: [2, 3], pads: [1, 2, 0, 3], dilations: [1, 2]}}
  - {op: Conv, inputs: [z, v], outputs: [s], name: same, attrs: {strides: [2, 2], auto_pad: SAME_UPPER}}
  - {op: Conv, inputs: [z, u], outputs: [t], name: narrow, attrs: {pads: [1, 1, 1, 1]}}
  - {op: Conv, inputs: [z, a], outputs: [q], name: bare}
  - {op: Conv, inputs: [z, e], outputs: [f], name: wide}
outputs: [y, s, t, q, f]
)",
                               "stems.yaml");
  auto small_integers = [](std::vector<float>& v, int salt) {
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(int((i * 7 + salt) % 9) - 4);
  };
  for (ir::Tensor& t : g.tensors) {
    if (t.kind != ir::TensorKind::Weight) continue;
    std::vector<float> v(static_cast<size_t>(t.type.numel()));
    small_integers(v, static_cast<int>(t.name.size()));
    auto bytes = std::make_shared<std::vector<uint8_t>>(4 * v.size());
    std::memcpy(bytes->data(), v.data(), bytes->size());
    t.data = bytes;
  }
  const ir::Graph d = demote_products_to_bf16(g, {});
  const std::vector<int> producers = d.producers();
  auto folded_channels = [&](const char* name) {
    const ir::Node& conv = node_named(d, name);
    const int cast = producers[static_cast<size_t>(conv.inputs[0])];
    if (cast < 0 || d.nodes[static_cast<size_t>(cast)].op != "Cast") return int64_t{-1};
    const int concat = producers[static_cast<size_t>(d.nodes[static_cast<size_t>(cast)].inputs[0])];
    if (concat < 0 || d.nodes[static_cast<size_t>(concat)].op != "Concat") return int64_t{-1};
    EXPECT_EQ(conv.attr_ints("kernel_shape")[1], 1) << name;
    EXPECT_EQ(d.type(conv.inputs[1]).dtype, ir::DType::BFloat16) << name;
    return d.type(conv.inputs[0]).shape[1];
  };
  EXPECT_EQ(folded_channels("odd"), 20);
  EXPECT_EQ(folded_channels("same"), 21);
  EXPECT_EQ(folded_channels("bare"), 18);
  EXPECT_EQ(folded_channels("narrow"), -1);
  EXPECT_EQ(d.type(node_named(d, "narrow").inputs[0]).dtype, ir::DType::Float32);
  // 8 columns: more than fold into one copy kernel (scheduler/partition.cc).
  EXPECT_EQ(folded_channels("wide"), -1);
  EXPECT_EQ(d.type(node_named(d, "wide").inputs[0]).dtype, ir::DType::Float32);
  EXPECT_NE(float32_reason(d, node_named(d, "wide"), {}).find("8 columns, more than the 7"),
            std::string::npos);
  EXPECT_NE(float32_reason(d, node_named(d, "narrow"), {}).find("3 columns make 9 channels"),
            std::string::npos);
  std::vector<reference::HostTensor> inputs;
  for (int t : g.inputs) {
    inputs.push_back(reference::HostTensor::zeros(g.type(t)));
    std::vector<float> v(static_cast<size_t>(g.type(t).numel()));
    small_integers(v, t);
    std::memcpy(inputs.back().bytes.data(), v.data(), 4 * v.size());
  }
  const std::vector<reference::HostTensor> want = reference::interpret(g, inputs);
  const std::vector<reference::HostTensor> got = reference::interpret(d, inputs);
  ASSERT_EQ(want.size(), got.size());
  for (size_t o = 0; o < want.size(); ++o) {
    EXPECT_EQ(want[o].type, got[o].type) << o;
    EXPECT_TRUE(want[o].bytes == got[o].bytes) << "output " << o;
  }
  PrecisionOptions keep;
  keep.keep_fp32 = {"odd"};
  const ir::Graph k = demote_products_to_bf16(g, keep);
  EXPECT_EQ(k.type(node_named(k, "odd").inputs[1]).shape, (ir::Shape{6, 4, 3, 5}));
  EXPECT_EQ(node_named(k, "same").attr_ints("kernel_shape"), (std::vector<int64_t>{7, 1}));
  PrecisionOptions matmul;
  matmul.ops = PrecisionOptions::Ops::MatMul;
  const ir::Graph m = demote_products_to_bf16(g, matmul);
  EXPECT_EQ(m.type(node_named(m, "same").inputs[1]).shape, (ir::Shape{8, 3, 7, 7}));
}

// The unit reads a product's second operand packed at compile time: a product whose second
// operand is an activation (attention's two products, or a weight times an activation)
// stays float32, and so does the activation it reads.
TEST(ReducedPrecision, ProductsWithoutAWeightAsSecondOperandStayFloat32) {
  const ir::Graph g = demote_products_to_bf16(read_yaml_text(R"(tlmc: 1
name: attention
inputs:
  q: {shape: [2, 8, 4]}
  k: {shape: [2, 4, 8]}
weights:
  w: {shape: [6, 8], init: {uniform: [-1, 1]}, seed: 1}
  v: {shape: [8, 3], init: {uniform: [-1, 1]}, seed: 2}
nodes:
  - {op: MatMul, inputs: [q, k], outputs: [s], name: scores}
  - {op: MatMul, inputs: [w, s], outputs: [t], name: weight_first}
  - {op: MatMul, inputs: [t, v], outputs: [y], name: projection}
outputs: [y]
)",
                                                             "attention.yaml"),
                                              {});
  for (const char* kept : {"scores", "weight_first"}) {
    const ir::Node& n = node_named(g, kept);
    EXPECT_EQ(g.type(n.inputs[0]).dtype, ir::DType::Float32) << kept;
    EXPECT_EQ(g.type(n.inputs[1]).dtype, ir::DType::Float32) << kept;
    EXPECT_EQ(n.attr_int("float32_output"), 0) << kept;
  }
  EXPECT_EQ(g.type(node_named(g, "projection").inputs[0]).dtype, ir::DType::BFloat16);
  EXPECT_EQ(g.type(node_named(g, "projection").inputs[1]).dtype, ir::DType::BFloat16);
  EXPECT_EQ(bf16_products_in_series(g), (std::vector<int>{1}));
}

TEST(ReducedPrecision, ProductsCanBeKeptInFloat32) {
  PrecisionOptions keep;
  keep.keep_fp32 = {"second"};
  const ir::Graph g = demote_products_to_bf16(read_yaml_text(kModel, "two.yaml"), keep);
  EXPECT_EQ(g.type(node_named(g, "second").inputs[0]).dtype, ir::DType::Float32);
  EXPECT_EQ(g.type(node_named(g, "first").inputs[0]).dtype, ir::DType::BFloat16);
  PrecisionOptions conv_only;
  conv_only.ops = PrecisionOptions::Ops::Conv;
  const ir::Graph c = demote_products_to_bf16(read_yaml_text(kModel, "two.yaml"), conv_only);
  for (const ir::Node& n : c.nodes) EXPECT_NE(n.op, "Cast");
  PrecisionOptions unknown;
  unknown.keep_fp32 = {"relu"};
  try {
    demote_products_to_bf16(read_yaml_text(kModel, "two.yaml"), unknown);
    FAIL() << "a name that is no product must be refused";
  } catch (const Diagnostic& d) {
    EXPECT_EQ(d.format(),
              "tlmc: error: --keep-fp32 names 'relu', which is not a matrix product or "
              "convolution of the model (--dump graph lists the nodes)");
  }
}

// A model's own products of 16-bit operands (ONNX's: their output of the operands' type)
// become tlmc's, accumulating in float32, and a Cast back: bfloat16 operands read as they
// are (float32_output, as --precision bf16 writes), float16 ones widened by Casts.
TEST(ReducedPrecision, AModelsOwnHalfProductsAccumulateInFloat32) {
  const ir::Graph b = read_yaml_text(R"(
tlmc: 1
name: own
inputs:
  x: {shape: [2, 4], dtype: bfloat16}
weights:
  w: {shape: [4, 3], dtype: bfloat16, init: {uniform: [-1, 1]}, seed: 1}
  c: {shape: [3], dtype: bfloat16, init: {uniform: [-1, 1]}, seed: 2}
nodes:
  - {op: Gemm, inputs: [x, w, c], outputs: [y], name: mm}
  - {op: Transpose, inputs: [y], outputs: [r]}
outputs: [r]
)",
                                     "own.yaml");
  std::vector<std::string> ops;
  for (const ir::Node& n : b.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"Cast", "Gemm", "Cast", "Transpose"}));
  const ir::Node& gemm = b.nodes[1];
  EXPECT_EQ(gemm.attr_int("float32_output"), 1);
  EXPECT_EQ(b.type(gemm.inputs[0]).dtype, ir::DType::BFloat16);
  EXPECT_EQ(b.type(gemm.inputs[1]).dtype, ir::DType::BFloat16);
  EXPECT_EQ(b.tensor(gemm.inputs[2]).name, "c.f32");  // the bias widened
  EXPECT_EQ(b.type(gemm.outputs[0]).dtype, ir::DType::Float32);
  EXPECT_EQ(b.tensor(b.nodes[2].outputs[0]).name, "y");
  EXPECT_EQ(b.type(b.nodes[2].outputs[0]).dtype, ir::DType::BFloat16);
  EXPECT_EQ(b.type(b.outputs[0]).dtype, ir::DType::BFloat16);

  const ir::Graph h = read_yaml_text(R"(
tlmc: 1
name: own
inputs:
  x: {shape: [1, 4, 3, 3], dtype: float16}
weights:
  w: {shape: [2, 4, 1, 1], dtype: float16, init: {uniform: [-1, 1]}, seed: 1}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [y], name: pw}
outputs: [y]
)",
                                     "own.yaml");
  ops.clear();
  for (const ir::Node& n : h.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"Cast", "Cast", "Conv", "Cast"}));
  const ir::Node& conv = h.nodes[2];
  EXPECT_EQ(conv.attr_int("float32_output"), 0);
  EXPECT_EQ(h.type(conv.inputs[0]).dtype, ir::DType::Float32);
  EXPECT_EQ(h.type(conv.outputs[0]).dtype, ir::DType::Float32);
  EXPECT_EQ(h.type(h.outputs[0]).dtype, ir::DType::Float16);

  // Operators that take no 16-bit tensors compute on them widened, rounding back: an Add of
  // bfloat16 tensors reads them through Casts to float32, and a Cast gives its result.
  const ir::Graph e = read_yaml_text(R"(
tlmc: 1
name: own
inputs:
  x: {shape: [2, 4], dtype: bfloat16}
  y: {shape: [4], dtype: bfloat16}
nodes:
  - {op: Add, inputs: [x, y], outputs: [s]}
  - {op: Relu, inputs: [s], outputs: [r]}
outputs: [r]
)",
                                     "own.yaml");
  ops.clear();
  for (const ir::Node& n : e.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"Cast", "Cast", "Add", "Cast", "Cast", "Relu", "Cast"}));
  EXPECT_EQ(e.type(e.nodes[2].outputs[0]).dtype, ir::DType::Float32);
  EXPECT_EQ(e.tensor(e.nodes[3].outputs[0]).name, "s");
  EXPECT_EQ(e.type(e.nodes[3].outputs[0]).dtype, ir::DType::BFloat16);
  EXPECT_EQ(e.type(e.outputs[0]).dtype, ir::DType::BFloat16);

  // A weight is widened at once: Clip reads its bounds' values.
  const ir::Graph clip = read_yaml_text(R"(
tlmc: 1
name: own
inputs:
  x: {shape: [4], dtype: float16}
weights:
  lo: {shape: [], dtype: float16, init: zeros}
  hi: {shape: [], dtype: float16, init: {uniform: [6, 6]}, seed: 1}
nodes:
  - {op: Clip, inputs: [x, lo, hi], outputs: [y]}
outputs: [y]
)",
                                        "own.yaml");
  ops.clear();
  for (const ir::Node& n : clip.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"Cast", "Clip", "Cast"}));
  EXPECT_EQ(clip.tensor(clip.nodes[1].inputs[2]).kind, ir::TensorKind::Weight);
  EXPECT_EQ(ir::weight_values(clip.tensor(clip.nodes[1].inputs[2])), std::vector<double>{6});

  // ONNX's types: a bias of another type than the operands' is an error (nothing is
  // widened where float types mix), as is a float32_output other than 0 or 1.
  const auto error_of = [](const std::string& yaml) {
    try {
      read_yaml_text(yaml, "own.yaml");
    } catch (const Diagnostic& d) {
      return d.format();
    }
    return std::string();
  };
  EXPECT_NE(error_of(R"(
tlmc: 1
name: own
inputs:
  x: {shape: [2, 4], dtype: bfloat16}
weights:
  w: {shape: [4, 3], dtype: bfloat16, init: {uniform: [-1, 1]}, seed: 1}
  c: {shape: [3], init: {uniform: [-1, 1]}, seed: 2}
nodes:
  - {op: Gemm, inputs: [x, w, c], outputs: [y], name: mm}
outputs: [y]
)")
                .find("Gemm 'mm' input 2 has dtype float32 but input 0 has dtype bfloat16"),
            std::string::npos);
  EXPECT_NE(error_of(R"(
tlmc: 1
name: own
inputs:
  x: {shape: [2, 4]}
weights:
  w: {shape: [4, 3], init: {uniform: [-1, 1]}, seed: 1}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [y], name: mm, attrs: {float32_output: 2}}
outputs: [y]
)")
                .find("MatMul 'mm' has float32_output 2 (expected 0 or 1)"),
            std::string::npos);
}

// --bf16-storage shared: a block's input that a product reads rounded and a sum reads too is
// read by the sum widened from the rounded copy, by a Cast of its own, so that the Cast
// rounding it is its producer's only reader; not where a float32 product reads it (--keep-fp32)
// nor for a graph input or output. By default the sum reads the float32 tensor.
TEST(ReducedPrecision, SharedStorageWidensTheRoundedCopyForOtherReaders) {
  const char* model = R"(tlmc: 1
name: blocks
inputs:
  x: {shape: [1, 8, 4, 4]}
weights:
  w: {shape: [8, 8, 1, 1], init: {uniform: [-1, 1]}, seed: 1}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [a], name: c1}
  - {op: Relu, inputs: [a], outputs: [t], name: r1}
  - {op: Conv, inputs: [t, w], outputs: [b], name: c2}
  - {op: Add, inputs: [b, t], outputs: [u], name: sum}
  - {op: Relu, inputs: [u], outputs: [v], name: r2}
  - {op: Conv, inputs: [v, w], outputs: [c], name: c3}
  - {op: Add, inputs: [c, v], outputs: [y], name: kept_sum}
  - {op: Add, inputs: [c, x], outputs: [z], name: input_sum}
  - {op: Cast, inputs: [t], outputs: [h], name: own_cast, attrs: {to: 10}}
outputs: [y, z, h]
)";
  PrecisionOptions shared;
  shared.storage = PrecisionOptions::Storage::Shared;
  shared.keep_fp32 = {"c3"};
  const ir::Graph g = demote_products_to_bf16(read_yaml_text(model, "blocks.yaml"), shared);
  const ir::Node& sum = node_named(g, "sum");
  const int widened = sum.inputs[1];
  EXPECT_EQ(g.type(widened).dtype, ir::DType::Float32);
  const std::vector<int> producers = g.producers();
  const ir::Node& cast = g.nodes[static_cast<size_t>(producers[static_cast<size_t>(widened)])];
  EXPECT_EQ(cast.op, "Cast");
  EXPECT_EQ(cast.inputs[0], node_named(g, "c2").inputs[0]);  // the copy c2 reads
  EXPECT_EQ(g.type(cast.inputs[0]).dtype, ir::DType::BFloat16);
  const int t = g.find_tensor("t");
  const std::vector<std::vector<int>> consumers = g.consumers();
  ASSERT_EQ(consumers[static_cast<size_t>(t)].size(), 1u);  // the rounding alone
  EXPECT_EQ(g.nodes[static_cast<size_t>(consumers[static_cast<size_t>(t)][0])].op, "Cast");
  // v is read by a product kept in float32, x is the graph's input: both stay as they are.
  EXPECT_EQ(node_named(g, "kept_sum").inputs[1], g.find_tensor("v"));
  EXPECT_EQ(node_named(g, "input_sum").inputs[1], g.find_tensor("x"));
  // The model's own Cast of t stays, reading the copy widened like the sum.
  EXPECT_EQ(g.nodes[static_cast<size_t>(
                        producers[static_cast<size_t>(node_named(g, "own_cast").inputs[0])])]
                .inputs[0],
            cast.inputs[0]);
  // By default the sum reads t itself.
  const ir::Graph d = demote_products_to_bf16(read_yaml_text(model, "blocks.yaml"), {});
  EXPECT_EQ(node_named(d, "sum").inputs[1], d.find_tensor("t"));
}

}  // namespace
}  // namespace tlmc::frontend
