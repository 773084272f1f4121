// Where -O0 computes the padding a pooling or a strided depthwise convolution reads:
// inlined into it when the tensor's innermost dimension, along which the loads are
// vectorised, is not padded (the channels of a channels-last or blocked tensor: one bounds
// test per tap for a whole vector); a pass of its own at the root when it is (the width of
// an NCHW tensor), for a depthwise convolution of stride 1 (which reads each padded element
// nine times), and for a dense convolution.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "ir/target.h"
#include "scheduler/channels_last_activations.h"
#include "scheduler/decision.h"
#include "scheduler/partition.h"
#include "scheduler/sketch.h"

namespace tlmc::scheduler {
namespace {

ir::Graph graph(const std::string& op) {
  return frontend::read_yaml_text(R"(tlmc: 1
name: m
inputs:
  x: {shape: [1, 32, 15, 15]}
weights:
  w: {shape: [32, 32, 3, 3], init: {uniform: [-0.3, 0.3]}, seed: 1}
  dw: {shape: [32, 1, 3, 3], init: {uniform: [-0.3, 0.3]}, seed: 2}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c], outputs: [r]}
  - )" + op + R"(
outputs: [y]
)",
                                  "model.yaml");
}

const std::string kMaxPool =
    "{op: MaxPool, inputs: [r], outputs: [y], attrs: {kernel_shape: [3, 3], strides: [2, 2], "
    "pads: [1, 1, 1, 1]}}";
const std::string kDepthwiseStrided =
    "{op: Conv, inputs: [r, dw], outputs: [y], attrs: {group: 32, strides: [2, 2], pads: [1, 1, "
    "1, 1]}}";
const std::string kDepthwise =
    "{op: Conv, inputs: [r, dw], outputs: [y], attrs: {group: 32, pads: [1, 1, 1, 1]}}";
const std::string kAveragePool =
    "{op: AveragePool, inputs: [r], outputs: [y], attrs: {kernel_shape: [3, 3], pads: [1, 1, 1, "
    "1]}}";

// Each padding stage of the graph's subgraphs: the operator of the stage that reads it
// ("conv", "maxpool", ...) and whether the -O0 schedule inlines it.
std::vector<std::pair<std::string, bool>> paddings(const ir::Graph& g) {
  ir::Target target = *ir::parse_target("x86-64-avx512");
  target.cores = 2;
  std::vector<std::pair<std::string, bool>> out;
  const Partition p = partition_graph(g);
  for (const std::vector<int>& sg : p.subgraphs) {
    const ir::TeProgram program = ir::lower_subgraph(g, sg).program;
    const std::vector<Decision> schedule = default_schedule(program, target);
    for (size_t s = 0; s < program.stages.size(); ++s) {
      const ir::Stage& st = program.stages[s];
      if (st.name.size() < 4 || st.name.compare(st.name.size() - 4, 4, ".pad") != 0) continue;
      bool inlined = false;
      for (const Decision& d : schedule)
        inlined = inlined || (d.kind == DecisionKind::Inline && d.stage == static_cast<int>(s));
      const std::vector<int> readers = program.consumers(st.output);
      out.emplace_back(
          readers.empty() ? "none" : program.stages[static_cast<size_t>(readers[0])].op, inlined);
    }
  }
  return out;
}

// The same, keyed by the reading operator.
std::map<std::string, bool> padding_inlined(const ir::Graph& g) {
  std::map<std::string, bool> out;
  for (const auto& [reader, inlined] : paddings(g)) out[reader] = inlined;
  return out;
}

TEST(PaddingLocation, APoolingOfChannelsLastTensorsReadsItsPaddingInline) {
  for (const std::string& pool : {kMaxPool, kAveragePool}) {
    const std::optional<ir::Graph> cl = channels_last_activations(graph(pool));
    ASSERT_TRUE(cl);
    const std::map<std::string, bool> inlined = padding_inlined(*cl);
    ASSERT_EQ(inlined.size(), 2u) << pool;
    for (const auto& [reader, in] : inlined) EXPECT_EQ(in, reader != "conv") << reader;
  }
}

TEST(PaddingLocation, APoolingOfBlockedTensorsReadsItsPaddingInline) {
  const std::optional<ir::Graph> b = blocked_activations(graph(kMaxPool), 16);
  ASSERT_TRUE(b);
  const std::map<std::string, bool> inlined = padding_inlined(*b);
  ASSERT_EQ(inlined.size(), 2u);
  for (const auto& [reader, in] : inlined) EXPECT_EQ(in, reader != "conv") << reader;
}

TEST(PaddingLocation, APoolingPaddedAlongItsInnermostDimensionKeepsAPaddingPass) {
  for (const std::string& pool : {kMaxPool, kAveragePool}) {
    const std::map<std::string, bool> inlined = padding_inlined(graph(pool));
    ASSERT_EQ(inlined.size(), 2u) << pool;
    for (const auto& [reader, in] : inlined) EXPECT_FALSE(in) << reader << " in " << pool;
  }
}

// How many paddings of the graph's subgraphs the -O0 schedule inlines (both convolutions'
// stages are of the operator "conv", so the paddings are counted, not named by reader).
size_t inlined_count(const ir::Graph& g) {
  const std::vector<std::pair<std::string, bool>> all = paddings(g);
  EXPECT_EQ(all.size(), 2u);
  return static_cast<size_t>(
      std::count_if(all.begin(), all.end(), [](const auto& p) { return p.second; }));
}

TEST(PaddingLocation, AStridedDepthwiseConvolutionReadsItsPaddingInline) {
  for (const auto& rewrite : {channels_last_activations(graph(kDepthwiseStrided)),
                              blocked_activations(graph(kDepthwiseStrided), 16)}) {
    ASSERT_TRUE(rewrite);
    EXPECT_EQ(inlined_count(*rewrite), 1u);  // the depthwise one's, not the dense one's
  }
  EXPECT_EQ(inlined_count(graph(kDepthwiseStrided)), 0u);  // NCHW: padded along the width
}

TEST(PaddingLocation, ADepthwiseConvolutionOfStrideOneKeepsAPaddingPass) {
  const std::optional<ir::Graph> cl = channels_last_activations(graph(kDepthwise));
  ASSERT_TRUE(cl);
  EXPECT_EQ(inlined_count(*cl), 0u);
}

}  // namespace
}  // namespace tlmc::scheduler
