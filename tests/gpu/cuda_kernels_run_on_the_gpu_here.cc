// CUDA libraries on the GPU of this machine (label gpu): every example and shapes of our own
// checked there at -O0 and -O1, --profile timing every call there, and -O2 measuring its
// candidates there into the tuning database. Each test that needs a GPU is skipped, with the
// reason, where there is none (the operator tests and the zoo add the GPU where there is one;
// tests/ops, tests/zoo). What runs on every machine: the libraries --check and --profile run on a
// GPU built by nvcc, and their failure without a GPU reported as the documented return code, never
// a crash; --profile refused without a GPU of the target's SM.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "driver/check.h"
#include "driver/compile.h"
#include "ir/cuda_device.h"
#include "scheduler/tuning_db.h"
#include "support/test_support.h"
#include "toolchain/cc.h"
#include "toolchain/cuda_toolkit.h"
#include "toolchain/isolated_run.h"

namespace tlmc::test {
namespace {

namespace fs = std::filesystem;

// Odd sizes, a strided convolution and a reduction over a short axis: no listed workload.
const char* kOwnShapes = R"(tlmc: 1
name: own
inputs:
  x: {shape: [3, 5, 17, 19]}
weights:
  w: {shape: [7, 5, 3, 3], init: {uniform: [-1, 1]}, seed: 3}
  b: {shape: [7], init: {uniform: [-1, 1]}, seed: 4}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [c], attrs: {strides: [2, 2], pads: [1, 0, 1, 0]}}
  - {op: Relu, inputs: [c], outputs: [r]}
  - {op: Softmax, inputs: [r], outputs: [y], attrs: {axis: 1}}
outputs: [y]
)";

std::vector<std::string> models(const TempDir& dir) {
  write_file(dir.file("own.yaml"), kOwnShapes);
  std::vector<std::string> out = {dir.file("own.yaml")};
  for (const char* e : {"mlp", "resnet_block", "transformer_layer"})
    out.push_back(std::string(TLMC_SOURCE_DIR) + "/examples/" + e + ".yaml");
  return out;
}

// The GPU here as a target that runs tlmc's code, or the reason there is none.
std::optional<ir::Target> gpu_here(std::string* why) {
  if (!ir::find_cuda_gpu(why)) return std::nullopt;
  std::optional<ir::Target> t = ir::parse_target("cuda");
  if (!t) {
    *why = ir::unknown_target("cuda");
    return std::nullopt;
  }
  if (*why = driver::gpu_cannot_run(*t); !why->empty()) return std::nullopt;
  return t;
}

// The own-shapes model's library for cuda-sm80 as it is built where a GPU of sm_80 is
// present (by nvcc), whether or not one is, in `dir`/build; with `profile`, profiled.
struct GpuLibrary {
  driver::CompiledModel model;
  ir::Target target;
  std::string so;
};
GpuLibrary gpu_library(const TempDir& dir, bool profile) {
  driver::CompileOptions o;
  o.model_path = models(dir)[0];
  o.target = *ir::parse_target("cuda-sm80");
  o.target.runs_here = true;
  o.profile = profile;
  GpuLibrary l{driver::compile_model(o), o.target, ""};
  fs::create_directories(dir.file("build"));
  l.so = driver::build_shared_library(l.model, dir.file("build"), l.target);
  return l;
}

TEST(GpuCheck, TheLibraryForTheGpuIsBuiltByNvccAndFailsCleanlyWithoutOne) {
  if (toolchain::find_nvcc().empty()) GTEST_SKIP() << "no nvcc here: the CUDA toolkit is absent";
  TempDir dir;
  // Any GPU here that runs tlmc's code runs it (SASS for sm_80, PTX for newer).
  std::string why;
  const bool gpu = gpu_here(&why).has_value();
  const GpuLibrary l = gpu_library(dir, false);
  ASSERT_TRUE(fs::exists(l.so));
  std::vector<std::vector<uint8_t>> inputs = {std::vector<uint8_t>(3 * 5 * 17 * 19 * 4, 0)};
  const toolchain::IsolatedRun run = toolchain::run_isolated(
      l.so, driver::hosted_entry(l.model, l.target), inputs, {3 * 7 * 9 * 9 * 4}, 120);
  if (gpu) {
    EXPECT_EQ(run.status, toolchain::IsolatedRun::Ok) << run.message;
  } else if (!ir::find_cuda_gpu(nullptr)) {
    // No GPU: CUDA refuses the weights' upload, OWN_ERROR_CUDA (3).
    EXPECT_EQ(run.status, toolchain::IsolatedRun::Failed) << run.message;
    EXPECT_NE(run.message.find("own_hosted_run returned 3"), std::string::npos) << run.message;
  }
}

TEST(GpuProfile, TheProfiledLibraryIsBuiltByNvccWithAnEventAroundEveryCall) {
  if (toolchain::find_nvcc().empty()) GTEST_SKIP() << "no nvcc here: the CUDA toolkit is absent";
  TempDir dir;
  std::string why;
  const bool gpu = gpu_here(&why).has_value();
  const GpuLibrary l = gpu_library(dir, true);
  const driver::CompiledModel& m = l.model;
  ASSERT_TRUE(m.profiled);
  const size_t calls = m.plan.calls.size();
  ASSERT_GT(calls, 1u);
  for (const codegen::GeneratedFile& f : m.files)
    if (f.name == "own.cu") {
      // One event before the first call and one after each.
      EXPECT_NE(f.contents.find("cudaEventRecord(own_profile_events[0], stream)"),
                std::string::npos);
      EXPECT_NE(f.contents.find("cudaEventRecord(own_profile_events[" + std::to_string(calls) +
                                "], stream)"),
                std::string::npos);
    }
  const toolchain::IsolatedRun run = toolchain::run_isolated(
      l.so, driver::hosted_entry(m, l.target), {std::vector<uint8_t>(3 * 5 * 17 * 19 * 4, 0)},
      {3 * 7 * 9 * 9 * 4}, 120, 3, 0, static_cast<int>(calls));
  if (gpu) {
    ASSERT_EQ(run.status, toolchain::IsolatedRun::Ok) << run.message;
    EXPECT_EQ(run.call_seconds.size(), calls);
  } else if (!ir::find_cuda_gpu(nullptr)) {
    EXPECT_EQ(run.status, toolchain::IsolatedRun::Failed) << run.message;
    EXPECT_NE(run.message.find("own_hosted_run returned 3"), std::string::npos) << run.message;
  }
}

TEST(GpuProfile, IsRefusedWithoutAGpuOfTheTargetsSm) {
  if (ir::parse_target("cuda-sm90")->runs_here) GTEST_SKIP() << "a GPU of sm_90 is here";
  TempDir dir;
  const CommandResult r = run_command(std::string(TLMC_EXE) + " --target cuda-sm90 --profile " +
                                      toolchain::shell_quote(models(dir)[0]) + " 2>&1");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("--profile times the kernels on a GPU of the target's SM (sm_90)"),
            std::string::npos)
      << r.out;
}

TEST(GpuProfile, TimesEveryCallOnTheGpu) {
  std::string why;
  const std::optional<ir::Target> gpu = gpu_here(&why);
  if (!gpu) GTEST_SKIP() << "no GPU here: " << why;
  TempDir dir;
  const CommandResult r = run_command(std::string(TLMC_EXE) + " --target cuda -O0 --profile " +
                                      toolchain::shell_quote(models(dir)[0]) + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("one run on the GPU (" + gpu->gpu.device + ")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the analytic model estimated"), std::string::npos) << r.out;
}

TEST(GpuCheck, EveryExampleAndOwnShapesPassOnTheGpu) {
  std::string why;
  const std::optional<ir::Target> gpu = gpu_here(&why);
  if (!gpu) GTEST_SKIP() << "no GPU here: " << why;
  TempDir dir;
  for (const std::string& model : models(dir))
    for (const char* level : {"-O0", "-O1"}) {
      SCOPED_TRACE(model + " " + level);
      const CommandResult r = run_command(std::string(TLMC_EXE) + " --target cuda " + level +
                                          " --check " + toolchain::shell_quote(model) + " 2>&1");
      EXPECT_EQ(r.exit_code, 0) << r.out;
      EXPECT_NE(r.out.find("the CUDA kernels ran on the GPU (" + gpu->gpu.device + ")"),
                std::string::npos)
          << r.out;
      EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
    }
}

// bench/cuda_vs_cublas.py's peers build with nvcc (warnings as errors); without a GPU the
// script says so and exits 3, having timed nothing.
TEST(GpuBench, ThePeersBuildAndTheBenchmarkSaysWhenThereIsNoGpu) {
  const std::string nvcc = toolchain::find_nvcc();
  if (nvcc.empty()) GTEST_SKIP() << "no nvcc here: the CUDA toolkit is absent";
  const fs::path toolkit = fs::path(nvcc).parent_path().parent_path();
  if (!fs::exists(toolkit / "include" / "cudnn.h") && !fs::exists("/usr/include/cudnn.h"))
    GTEST_SKIP() << "no cuDNN beside " << nvcc << ": the benchmark's peers need it";
  TempDir dir;
  const CommandResult built =
      run_command(toolchain::shell_quote(nvcc) + " -O2 -std=c++17 -Werror all-warnings " +
                  toolchain::shell_quote(std::string(TLMC_SOURCE_DIR) + "/bench/cuda_peers.cu") +
                  " -lcublas -lcudnn -o " + toolchain::shell_quote(dir.file("peers")) + " 2>&1");
  EXPECT_EQ(built.exit_code, 0) << built.out;
  std::string why;
  if (gpu_here(&why)) return;  // the benchmark itself is run by hand (bench/README.md)
  const CommandResult r = run_command(
      "python3 " +
      toolchain::shell_quote(std::string(TLMC_SOURCE_DIR) + "/bench/cuda_vs_cublas.py") +
      " --tlmc " + toolchain::shell_quote(TLMC_EXE) + " --work " +
      toolchain::shell_quote(dir.file("work")) + " 2>&1");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  EXPECT_NE(r.out.find("no GPU to time kernels on"), std::string::npos) << r.out;
}

TEST(GpuTuning, O2MeasuresOnTheGpuIntoTheTuningDatabase) {
  std::string why;
  const std::optional<ir::Target> gpu = gpu_here(&why);
  if (!gpu)
    GTEST_SKIP() << "no GPU here: " << why
                 << " (-O2 ranks by estimate instead: EstimatedSchedules tests)";
  TempDir dir;
  const std::string db = dir.file("tuning.db");
  const std::string cmd = std::string(TLMC_EXE) + " --target cuda -O2 --tuning-db " + db + " " +
                          toolchain::shell_quote(models(dir)[0]);
  const CommandResult r = run_command(cmd + " --check 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("nothing was measured"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
  const scheduler::TuningDb records = scheduler::TuningDb::open(db, scheduler::DbAccess::Read);
  int ok = 0;
  for (const scheduler::TuningRecord& rec : records.all())
    if (rec.status == scheduler::MeasureStatus::Ok && rec.target == gpu->descriptor()) ++ok;
  EXPECT_GT(ok, 0) << r.out;
  // A second build takes every schedule from the records.
  const CommandResult again =
      run_command(cmd + " -v --emit source -o " + dir.file("out") + " 2>&1");
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_NE(again.out.find("from tuning records"), std::string::npos) << again.out;
}

}  // namespace
}  // namespace tlmc::test
