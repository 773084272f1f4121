// Identical subgraphs (same workload key) compile to one kernel called many times, and
// the workspace reuses memory between tensors whose lifetimes do not overlap.
#include <gtest/gtest.h>

#include "driver/compile.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

// Four identical Conv+Relu layers on 16 channels, in a chain.
const char* kChain = R"(tlmc: 1
name: chain
inputs:
  x: {shape: [1, 16, 12, 12]}
weights:
  w1: {shape: [16, 16, 3, 3], init: {uniform: [-0.2, 0.2]}, seed: 1}
  w2: {shape: [16, 16, 3, 3], init: {uniform: [-0.2, 0.2]}, seed: 2}
  w3: {shape: [16, 16, 3, 3], init: {uniform: [-0.2, 0.2]}, seed: 3}
  w4: {shape: [16, 16, 3, 3], init: {uniform: [-0.2, 0.2]}, seed: 4}
nodes:
  - {op: Conv, inputs: [x, w1], outputs: [c1], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c1], outputs: [r1]}
  - {op: Conv, inputs: [r1, w2], outputs: [c2], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c2], outputs: [r2]}
  - {op: Conv, inputs: [r2, w3], outputs: [c3], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c3], outputs: [r3]}
  - {op: Conv, inputs: [r3, w4], outputs: [c4], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c4], outputs: [y]}
outputs: [y]
)";

TEST(Deduplication, IdenticalLayersShareOneKernelAndMemory) {
  TempDir dir;
  write_file(dir.file("chain.yaml"), kChain);
  driver::CompileOptions o;
  o.model_path = dir.file("chain.yaml");
  o.target = *ir::parse_target("x86-64");
  driver::CompiledModel m = driver::compile_model(o);
  EXPECT_EQ(m.plan.calls.size(), 4u);
  EXPECT_EQ(m.plan.kernels.size(), 1u) << "the four layers have one workload key";
  for (const codegen::Call& c : m.plan.calls) EXPECT_EQ(c.kernel, 0);
  // Three intermediates of 9216 bytes live one after another; with each call's scratch,
  // never more than two tensors and one scratch block are live at once.
  const int64_t tensor = 16 * 12 * 12 * 4;
  const int64_t scratch = m.plan.kernels[0].loops.scratch_bytes;
  EXPECT_GT(scratch, 0) << "the padded input is materialised";
  EXPECT_LE(m.plan.workspace_bytes, 2 * tensor + scratch + 128);
  EXPECT_LT(m.plan.workspace_bytes, 3 * tensor + 4 * scratch);
}

}  // namespace
}  // namespace tlmc::test
