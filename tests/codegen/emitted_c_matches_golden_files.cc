// Golden tests: the C emitted for a few small kernels, pinned. A change to code generation
// or to the default schedule shows up here as a readable diff. To accept a deliberate
// change, run the test with TLMC_UPDATE_GOLDEN=1 and review the files it rewrites.
#include <gtest/gtest.h>

#include <cstdlib>

#include "driver/compile.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

struct Golden {
  const char* name;
  const char* target;
  const char* model;
};

const char* kMatMulRelu = R"(tlmc: 1
name: mm_relu
inputs:
  x: {shape: [4, 16]}
weights:
  w: {shape: [16, 32], init: {uniform: [-1, 1]}}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: Relu, inputs: [h], outputs: [y]}
outputs: [y]
)";

const char* kSoftmax = R"(tlmc: 1
name: softmax
inputs:
  x: {shape: [6, 20]}
nodes:
  - {op: Softmax, inputs: [x], outputs: [y]}
outputs: [y]
)";

const char* kConvPool = R"(tlmc: 1
name: conv_pool
inputs:
  x: {shape: [1, 2, 6, 6]}
weights:
  w: {shape: [4, 2, 3, 3], init: {uniform: [-1, 1]}}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
  - {op: MaxPool, inputs: [c], outputs: [y], attrs: {kernel_shape: [2, 2], strides: [2, 2]}}
outputs: [y]
)";

// Channels-last, so the pooling reads its padding inline (one bounds test per tap for a
// vector of channels).
const char* kConvPaddedPool = R"(tlmc: 1
name: conv_padded_pool
inputs:
  x: {shape: [1, 16, 4, 4]}
weights:
  w: {shape: [16, 16, 1, 1], init: {uniform: [-1, 1]}}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c]}
  - {op: MaxPool, inputs: [c], outputs: [y], attrs: {kernel_shape: [3, 3], strides: [2, 2], pads: [1, 1, 1, 1]}}
outputs: [y]
)";

void PrintTo(const Golden& g, std::ostream* os) { *os << g.name; }

class EmittedC : public ::testing::TestWithParam<Golden> {};

TEST_P(EmittedC, MatchesGoldenFile) {
  const Golden& g = GetParam();
  TempDir dir;
  write_file(dir.file("model.yaml"), g.model);
  driver::CompileOptions o;
  o.model_path = dir.file("model.yaml");
  o.target = *ir::parse_target(g.target);
  driver::CompiledModel m = driver::compile_model(o);
  std::string emitted;
  for (const codegen::GeneratedFile& f : m.files)
    if (f.name == m.plan.name + ".c") emitted = f.contents;
  ASSERT_FALSE(emitted.empty());
  const std::string path = std::string(TLMC_SOURCE_DIR) + "/tests/codegen/golden/" + g.name + ".c";
  if (std::getenv("TLMC_UPDATE_GOLDEN")) write_file(path, emitted);
  const std::string want = read_file(path);
  ASSERT_FALSE(want.empty()) << path << " is missing; run with TLMC_UPDATE_GOLDEN=1 to create it";
  EXPECT_TRUE(emitted == want) << "the C emitted for " << g.name << " differs from " << path
                               << "\n--- emitted ---\n"
                               << emitted;
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, EmittedC,
    ::testing::Values(Golden{"mm_relu_x86_64", "x86-64", kMatMulRelu},
                      Golden{"mm_relu_avx512", "x86-64-avx512", kMatMulRelu},
                      Golden{"softmax_avx2", "x86-64-avx2", kSoftmax},
                      Golden{"conv_pool_avx2", "x86-64-avx2", kConvPool},
                      Golden{"conv_padded_pool_avx512", "x86-64-avx512", kConvPaddedPool}),
    [](const ::testing::TestParamInfo<Golden>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace tlmc::test
