// Every CUDA kernel tlmc emits is compiled in process by NVRTC for the target's SM, and
// ptxas's report of it is read back: registers, local memory and spills, shared memory,
// barriers, each held against the descriptor, with the occupancy that follows. The examples'
// -O0 kernels build for sm_80 and sm_90 without a warning, a spill or a limit exceeded; a
// register budget the descriptor lowers is obeyed, its spills reported. Where NVRTC is not
// installed the checks that need it skip, and tlmc says the kernels went unchecked.
#include <gtest/gtest.h>

#include <string>

#include "driver/compile.h"
#include "driver/cuda_kernel_check.h"
#include "ir/diagnostic.h"
#include "support/test_support.h"
#include "toolchain/nvrtc.h"

namespace tlmc::test {
namespace {

const char* kReport = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'm_k0_g0' for 'sm_80'
ptxas info    : Function properties for m_k0_g0
ptxas         .     256 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, 1024 bytes smem, 368 bytes cmem[0]
ptxas info    : Compile time = 8.836 ms
ptxas info    : Compiling entry function 'm_k1_g0' for 'sm_80'
ptxas info    : Function properties for m_k1_g0
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, 360 bytes cmem[0]
)";

TEST(PtxasReport, IsReadPerEntryFunction) {
  const std::vector<ir::KernelResources> k = toolchain::parse_ptxas_report(kReport);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k[0].name, "m_k0_g0");
  EXPECT_EQ(k[0].registers, 32);
  EXPECT_EQ(k[0].stack_bytes, 256);
  EXPECT_EQ(k[0].spill_stores, 8);
  EXPECT_EQ(k[0].spill_loads, 12);
  EXPECT_EQ(k[0].barriers, 1);
  EXPECT_EQ(k[0].shared_bytes, 1024);
  EXPECT_EQ(k[0].constant_bytes, 368);
  EXPECT_EQ(k[1].name, "m_k1_g0");
  EXPECT_EQ(k[1].registers, 8);
  EXPECT_EQ(k[1].barriers, 0);
  EXPECT_EQ(k[1].shared_bytes, 0);
  EXPECT_EQ(k[1].stack_bytes, 0);
}

bool have_nvrtc() {
  std::string why;
  return toolchain::nvrtc_compile("extern \"C\" __global__ void k() {}", "k.cu", {},
                                  ir::parse_target("cuda-sm80")->gpu, &why)
      .has_value();
}

// A launch's kernel missing from the report (NVRTC gives an empty log for a compile it took
// from its cache) leaves the kernels unchecked, with the reason; it is no compiler crash.
TEST(PtxasReport, AKernelItDoesNotNameIsAReasonNotACrash) {
  toolchain::NvrtcOutput out;
  out.version = "13.0";
  out.log = kReport;
  out.kernels = toolchain::parse_ptxas_report(kReport);
  std::string why;
  const auto both =
      toolchain::launched_kernels(out, {{"m_k1_g0", 64, 0}, {"m_k0_g0", 128, 512}}, &why);
  ASSERT_TRUE(both) << why;
  ASSERT_EQ(both->size(), 2u);
  EXPECT_EQ((*both)[0].name, "m_k1_g0");
  EXPECT_EQ((*both)[0].threads, 64);
  EXPECT_EQ((*both)[1].dynamic_shared_bytes, 512);

  out.log.clear();
  out.kernels.clear();
  EXPECT_FALSE(toolchain::launched_kernels(out, {{"m_k0_g0", 128, 0}}, &why));
  EXPECT_NE(why.find("names no kernel m_k0_g0"), std::string::npos) << why;
  EXPECT_NE(why.find("cache"), std::string::npos) << why;
}

// NVRTC 12.9 and later, where a CUDA driver is installed, answer a text compiled before from a
// cache, without ptxas's report: every compile of the same text must still carry it.
TEST(Nvrtc, TheSameTextCompiledAgainIsReportedAgain) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC is not installed here";
  const ir::GpuLimits gpu = ir::parse_target("cuda-sm90")->gpu;
  for (int i = 0; i < 3; ++i) {
    std::string why;
    const auto out = toolchain::nvrtc_compile(
        "extern \"C\" __global__ void twice(float* x) { x[threadIdx.x] *= 2.0f; }", "t.cu", {}, gpu,
        &why);
    ASSERT_TRUE(out) << why;
    EXPECT_TRUE(toolchain::launched_kernels(*out, {{"twice", 32, 0}}, &why))
        << "compile " << i + 1 << ": " << why;
  }
}

TEST(Nvrtc, TextThatWarnsOrFailsIsACompilerBug) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC is not installed here";
  const ir::GpuLimits gpu = ir::parse_target("cuda-sm90")->gpu;
  std::string why;
  try {
    toolchain::nvrtc_compile("extern \"C\" __global__ void k(float* y) { int unused; y[0] = 1; }",
                             "k.cu", {}, gpu, &why);
    FAIL() << "an unused variable's warning passed";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("warned about the generated k.cu for sm_90"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("unused"), std::string::npos) << e.what();
  }
  EXPECT_THROW(toolchain::nvrtc_compile("__global__ void k( {", "k.cu", {}, gpu, &why),
               InternalError);
  // A header is found by its name; the report names the entry, with its shared memory.
  const std::optional<toolchain::NvrtcOutput> out = toolchain::nvrtc_compile(
      "#include \"n.h\"\nextern \"C\" __global__ void k(float* y) {\n"
      "  __shared__ float s[N];\n  s[threadIdx.x] = y[threadIdx.x];\n  __syncthreads();\n"
      "  y[threadIdx.x] = s[(threadIdx.x + 1) % N];\n}\n",
      "k.cu", {{"n.h", "#define N 64\n"}}, gpu, &why);
  ASSERT_TRUE(out);
  ASSERT_EQ(out->kernels.size(), 1u);
  EXPECT_EQ(out->kernels[0].name, "k");
  EXPECT_EQ(out->kernels[0].shared_bytes, 256);
  EXPECT_EQ(out->kernels[0].barriers, 1);
  EXPECT_GT(out->kernels[0].registers, 0);
}

driver::CompiledModel compile(const std::string& example, const std::string& target,
                              int registers) {
  driver::CompileOptions o;
  o.model_path = std::string(TLMC_SOURCE_DIR) + "/examples/" + example;
  o.target = *ir::parse_target(target);
  if (registers > 0) o.target.gpu.regs_per_thread = registers;
  o.opt_level = 0;
  return driver::compile_model(o);
}

class ExampleKernels : public ::testing::TestWithParam<const char*> {};

TEST_P(ExampleKernels, BuildWithoutSpillsWithinTheLimits) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC is not installed here";
  for (const char* target : {"cuda-sm80", "cuda-sm90"}) {
    SCOPED_TRACE(target);
    const driver::CompiledModel m = compile(GetParam(), target, 0);
    const ir::Target t = *ir::parse_target(target);
    EXPECT_EQ(m.cuda_unchecked, "");
    ASSERT_FALSE(m.cuda_kernels.empty());
    for (const ir::KernelResources& k : m.cuda_kernels) {
      SCOPED_TRACE(k.name);
      EXPECT_EQ(k.spill_stores, 0);
      EXPECT_EQ(k.spill_loads, 0);
      EXPECT_GT(k.registers, 0);
      EXPECT_TRUE(ir::limit_violations(t.gpu, k).empty());
      EXPECT_GE(ir::occupancy(t.gpu, k).blocks_per_sm, 1);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleKernels,
                         ::testing::Values("mlp.yaml", "resnet_block.yaml",
                                           "transformer_layer.yaml"),
                         [](const auto& info) {
                           const std::string name = info.param;
                           return name.substr(0, name.find('.'));
                         });

TEST(RegisterBudget, TheDescriptorsIsObeyedAndItsSpillsReported) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC is not installed here";
  // The transformer's tiled products keep a 4x4 register tile and its operands: 32
  // registers a thread cannot hold them.
  const driver::CompiledModel m = compile("transformer_layer.yaml", "cuda-sm80", 32);
  int spilled = 0;
  for (const ir::KernelResources& k : m.cuda_kernels) {
    EXPECT_LE(k.registers, 32) << k.name;
    if (k.spill_stores > 0) ++spilled;
  }
  EXPECT_GT(spilled, 0) << "no kernel spills within 32 registers";
}

TEST(DumpResources, PrintsOneLinePerKernel) {
  if (!have_nvrtc()) GTEST_SKIP() << "NVRTC is not installed here";
  TempDir dir;
  CommandResult r =
      run_command(std::string(TLMC_EXE) + " -O0 --target cuda-sm90 " + TLMC_SOURCE_DIR +
                  "/examples/mlp.yaml --dump resources -o " + dir.file("src") + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("# CUDA kernels for cuda-sm90"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("limited by"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nmlp_k0_g0 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nmlp_k2_g0 "), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tlmc::test
