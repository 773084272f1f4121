// The normalised key (ir/normalised_key.h) names a subgraph's shape family: the same
// convolution at another batch and image size, with or without its epilogue, with its
// default stride written or not, and in every layout plan has one key, where the workload keys
// differ; a product by a weight keeps its K and N through batch and sequence length; attention's
// products and a Softmax keep theirs through the model's batch; a change of kernel, stride,
// channels, groups or reduced extent is another family. `tlmc lm keys` prints it as its fourth
// column.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "driver/compile.h"
#include "driver/layout_plans.h"
#include "frontend/fold_constants.h"
#include "ir/normalised_key.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

// Workload key -> normalised key of every distinct subgraph of `yaml`, in the layout plan
// `layout` asks for (Auto: the model's and the others -O3 would tune).
std::map<std::string, std::string> keys_of(const std::string& yaml,
                                           driver::ActivationLayout layout) {
  TempDir dir;
  write_file(dir.file("model.yaml"), yaml);
  driver::CompileOptions o;
  o.model_path = dir.file("model.yaml");
  o.target = *ir::parse_target("x86-64-avx512");
  const ir::Graph graph = frontend::fold_constants(driver::read_model(o));
  const driver::SplitModel split = driver::split_model(graph, o.target, layout, nullptr);
  std::map<std::string, std::string> out;
  for (const driver::Distinct& d : split.distinct)
    out[d.key] = ir::normalised_key(split.plans[static_cast<size_t>(d.plan)].graph, d.nodes);
  return out;
}

std::set<std::string> families(const std::map<std::string, std::string>& keys) {
  std::set<std::string> out;
  for (const auto& [key, family] : keys) out.insert(family);
  return out;
}

std::string conv_model(int batch, int size, int cin, int cout, int kernel, int stride, int group,
                       bool relu) {
  const std::string pad = std::to_string(kernel / 2);
  return "tlmc: 1\nname: conv\ninputs:\n  x: {shape: [" + std::to_string(batch) + ", " +
         std::to_string(cin) + ", " + std::to_string(size) + ", " + std::to_string(size) +
         "]}\nweights:\n  w: {shape: [" + std::to_string(cout) + ", " +
         std::to_string(cin / group) + ", " + std::to_string(kernel) + ", " +
         std::to_string(kernel) +
         "], init: {uniform: [-1, 1]}, seed: 1}\nnodes:\n  - {op: Conv, inputs: [x, w], outputs: "
         "[" +
         (relu ? "h" : "y") + "], attrs: {pads: [" + pad + ", " + pad + ", " + pad + ", " + pad +
         "], strides: [" + std::to_string(stride) + ", " + std::to_string(stride) +
         "], group: " + std::to_string(group) + "}}\n" +
         (relu ? "  - {op: Relu, inputs: [h], outputs: [y]}\n" : "") + "outputs: [y]\n";
}

const char* kConvFamily =
    "Conv cin=32 cout=32 kernel=3x3 stride=1x1 pads=1,1,1,1 dilation=1x1 groups=1";

TEST(NormalisedKey, AConvolutionKeepsItsFamilyThroughBatchImageEpilogueAndLayout) {
  const auto one =
      keys_of(conv_model(1, 28, 32, 32, 3, 1, 1, true), driver::ActivationLayout::Model);
  const auto four =
      keys_of(conv_model(4, 14, 32, 32, 3, 1, 1, false), driver::ActivationLayout::Model);
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(four.size(), 1u);
  EXPECT_NE(one.begin()->first, four.begin()->first) << "two workload keys";
  EXPECT_EQ(one.begin()->second, kConvFamily);
  EXPECT_EQ(four.begin()->second, kConvFamily);
  // A stride the model leaves out is its default: one family with a stride of 1 written.
  std::string unwritten = conv_model(1, 28, 32, 32, 3, 1, 1, true);
  const size_t stride = unwritten.find(", strides: [1, 1]");
  ASSERT_NE(stride, std::string::npos);
  unwritten.erase(stride, std::string(", strides: [1, 1]").size());
  EXPECT_EQ(families(keys_of(unwritten, driver::ActivationLayout::Model)),
            std::set<std::string>{kConvFamily});
  for (driver::ActivationLayout layout :
       {driver::ActivationLayout::ChannelsLast, driver::ActivationLayout::Blocked}) {
    // The conversions into and out of the layout are subgraphs of their own (chains).
    const std::set<std::string> f =
        families(keys_of(conv_model(2, 28, 32, 32, 3, 1, 1, true), layout));
    EXPECT_EQ(f.count(kConvFamily), 1u) << ::testing::PrintToString(f);
    for (const std::string& k : f)
      if (k != kConvFamily) EXPECT_EQ(k.rfind("chain ", 0), 0u) << k;
  }
}

TEST(NormalisedKey, KernelStrideChannelsAndGroupsAreOtherFamilies) {
  const std::string base =
      *families(keys_of(conv_model(1, 28, 32, 32, 3, 1, 1, false), driver::ActivationLayout::Model))
           .begin();
  std::set<std::string> seen = {base};
  for (const std::string& yaml :
       {conv_model(1, 28, 32, 32, 5, 1, 1, false), conv_model(1, 28, 32, 32, 3, 2, 1, false),
        conv_model(1, 28, 32, 64, 3, 1, 1, false), conv_model(1, 28, 32, 32, 3, 1, 8, false)}) {
    const std::string f = *families(keys_of(yaml, driver::ActivationLayout::Model)).begin();
    EXPECT_TRUE(seen.insert(f).second) << f << " is another family's key";
  }
  EXPECT_EQ(
      seen.count("Conv cin=32 cout=32 kernel=3x3 stride=1x1 pads=1,1,1,1 dilation=1x1 groups=8"),
      1u)
      << ::testing::PrintToString(seen);
}

std::string attention(int batch, int tokens) {
  const std::string b = std::to_string(batch), t = std::to_string(tokens);
  return "tlmc: 1\nname: attn\ninputs:\n  q: {shape: [" + b + ", 4, " + t +
         ", 16]}\n  k: {shape: [" + b + ", 4, 16, " + t + "]}\n  x: {shape: [" + b + ", " + t +
         ", 64]}\nweights:\n  w: {shape: [64, 96], init: {uniform: [-1, 1]}, seed: 2}\n"
         "nodes:\n"
         "  - {op: MatMul, inputs: [q, k], outputs: [s]}\n"
         "  - {op: Softmax, inputs: [s], outputs: [p], attrs: {axis: -1}}\n"
         "  - {op: MatMul, inputs: [x, w], outputs: [h]}\n"
         "  - {op: Add, inputs: [h, h], outputs: [y]}\n"
         "outputs: [p, y]\n";
}

TEST(NormalisedKey, ProductsAndSoftmaxKeepTheirsThroughTheModelsBatch) {
  const std::set<std::string> one =
      families(keys_of(attention(1, 32), driver::ActivationLayout::Model));
  const std::set<std::string> two =
      families(keys_of(attention(2, 32), driver::ActivationLayout::Model));
  EXPECT_EQ(one, two);
  EXPECT_EQ(one, (std::set<std::string>{"MatMul of activations k=16 n=32 batches=4",
                                        "MatMul k=64 n=96", "Softmax over=32"}))
      << ::testing::PrintToString(one);
  // The product by a weight keeps its family at another sequence length; attention's
  // product and the Softmax reduce over the tokens, so theirs change.
  const std::set<std::string> longer =
      families(keys_of(attention(1, 48), driver::ActivationLayout::Model));
  EXPECT_EQ(longer.count("MatMul k=64 n=96"), 1u);
  EXPECT_EQ(longer.count("Softmax over=48"), 1u);
}

TEST(NormalisedKey, GemmReadsItsWeightTransposedAndChainsAreNamedByTheirOperators) {
  const auto keys = keys_of(R"(tlmc: 1
name: gemm
inputs:
  x: {shape: [3, 40]}
  z: {shape: [3, 24]}
weights:
  w: {shape: [24, 40], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: Gemm, inputs: [x, w], outputs: [g], attrs: {transB: 1}}
  - {op: Mul, inputs: [z, z], outputs: [m]}
  - {op: Sigmoid, inputs: [m], outputs: [s]}
outputs: [g, s]
)",
                            driver::ActivationLayout::Model);
  EXPECT_EQ(families(keys), (std::set<std::string>{"MatMul k=40 n=24", "chain Mul,Sigmoid"}))
      << ::testing::PrintToString(families(keys));
}

// `tlmc lm keys` prints the workload key, the model, the plan and the normalised key.
TEST(NormalisedKey, LmKeysPrintsItAsItsFourthColumn) {
  TempDir dir;
  write_file(dir.file("conv.yaml"), conv_model(1, 28, 32, 32, 3, 1, 1, true));
  const CommandResult r =
      run_command(std::string(TLMC_EXE) + " lm keys --target x86-64 " + dir.file("conv.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\t" + dir.file("conv.yaml") + "\t"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::string("\t") + kConvFamily + "\n"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tlmc::test
