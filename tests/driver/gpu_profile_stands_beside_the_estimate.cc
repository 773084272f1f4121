// On a GPU, `tlmc --profile` prints each call's time beside the analytic model's estimate of
// it, and both added up: what a session with a GPU reads to see how far the model that ranks
// CUDA schedules is from the machine. The estimates are the ones --dump resources prints,
// one per kernel, all its launches; they need no GPU, so they are checked here.
#include <gtest/gtest.h>

#include <sstream>

#include "driver/compile.h"
#include "driver/cuda_kernel_check.h"
#include "driver/profile.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

TEST(GpuProfileEstimate, EveryKernelIsEstimatedOverAllItsLaunches) {
  driver::CompileOptions o;
  o.model_path = std::string(TLMC_SOURCE_DIR) + "/examples/transformer_layer.yaml";
  o.target = *ir::parse_target("cuda-sm80");
  o.target.runs_here = false;
  const driver::CompiledModel m = driver::compile_model(o);
  const std::vector<scheduler::GpuEstimate> e = driver::estimate_cuda_kernels(o.target, m);
  ASSERT_EQ(e.size(), m.plan.kernels.size());
  size_t launches = 0;
  for (size_t k = 0; k < e.size(); ++k) {
    SCOPED_TRACE("kernel " + std::to_string(k));
    EXPECT_EQ(e[k].launches.size(), ir::gpu_roots(m.plan.kernels[k].loops).size());
    EXPECT_GT(e[k].seconds, 0);
    double sum = 0;
    for (const scheduler::GpuLaunchEstimate& l : e[k].launches) sum += l.seconds;
    EXPECT_NEAR(e[k].seconds, sum, 1e-12);
    launches += e[k].launches.size();
  }
  // Where NVRTC checked the kernels, the estimates read ptxas's report of each launch.
  if (!m.cuda_kernels.empty()) EXPECT_EQ(launches, m.cuda_kernels.size());
}

driver::ModelProfile two_calls(const std::string& ran_on) {
  driver::ModelProfile p;
  p.runs = 10;
  p.ran_on = ran_on;
  p.run_seconds = 30e-6;
  p.calls.push_back({0, 0, "Gemm", "aaaa", 20e-6, 2e6, 4e3, 0, 12.5e-6});
  p.calls.push_back({1, 1, "Softmax", "bbbb", 10e-6, 1e3, 4e3, 0, 2.25e-6});
  return p;
}

TEST(GpuProfileEstimate, EachCallsTimeStandsBesideItsEstimate) {
  std::ostringstream gpu;
  driver::print_profile(gpu, two_calls("NVIDIA H100 80GB HBM3"));
  const std::string out = gpu.str();
  EXPECT_NE(out.find(" est us "), std::string::npos) << out;
  EXPECT_NE(out.find("      20.00  66.7%    100.0     0.2   12.50  Gemm"), std::string::npos)
      << out;
  EXPECT_NE(out.find("      10.00  33.3%      0.1     0.4    2.25  Softmax"), std::string::npos)
      << out;
  EXPECT_NE(out.find("one run on the GPU (NVIDIA H100 80GB HBM3): the calls' medians add up to "
                     "30.00 us (CUDA events between calls, 10 runs); the analytic model "
                     "estimated 14.75 us\n"),
            std::string::npos)
      << out;

  // On a CPU the column is the copy's, and there is no estimate.
  std::ostringstream cpu;
  driver::print_profile(cpu, two_calls(""));
  EXPECT_NE(cpu.str().find(" x copy "), std::string::npos) << cpu.str();
  EXPECT_EQ(cpu.str().find("estimate"), std::string::npos) << cpu.str();
}

}  // namespace
}  // namespace tlmc::test
