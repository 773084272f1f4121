// A CUDA target's library from the `tlmc` command: --emit source and lib write what
// docs/driver.md lists, --check runs it in the CPU emulator, a C++ program links the
// archive with the CUDA runtime alone, and CUDA's errors reach the caller as the documented
// codes (a missing GPU as NAME_ERROR_CUDA; a sticky error, made in the emulator, as
// NAME_ERROR_DEVICE on this and every later run).
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.h"

namespace tlmc::test {
namespace {

namespace fs = std::filesystem;

const char* kModel = R"(tlmc: 1
name: tiny
inputs:
  x: {shape: [3, 8]}
weights:
  w: {shape: [8, 5], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: Relu, inputs: [h], outputs: [y]}
outputs: [y]
)";

std::string tlmc(const std::string& args) { return std::string(TLMC_EXE) + " " + args; }

std::string nvcc() {
  CommandResult r = run_command("command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null");
  return r.exit_code == 0 ? r.out.substr(0, r.out.find('\n')) : "";
}

class CudaLibrary : public ::testing::Test {
 protected:
  void SetUp() override { write_file(dir.file("tiny.yaml"), kModel); }
  TempDir dir;
};

TEST_F(CudaLibrary, SourceHasTheKernelsTheHeaderAndTheMacros) {
  CommandResult r = run_command(
      tlmc("-O0 --target cuda-sm80 " + dir.file("tiny.yaml") + " -o " + dir.file("src")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* f : {"tiny.cu", "tiny.h", "tiny_cuda.h", "tiny_weights.S", "tiny_weights.bin"})
    EXPECT_TRUE(fs::exists(dir.file(std::string("src/") + f))) << f;
  EXPECT_EQ(count_entries(dir.file("src")), 5);
  const std::string cu = read_file(dir.file("src/tiny.cu"));
  EXPECT_NE(cu.find("__global__ void __launch_bounds__("), std::string::npos);
  EXPECT_NE(cu.find("TLMC_LAUNCH("), std::string::npos);
  EXPECT_EQ(cu.find("<<<"), std::string::npos) << "launches go through cudaLaunchKernel";
  const std::string h = read_file(dir.file("src/tiny.h"));
  EXPECT_NE(h.find("int tiny_run_async(const tiny_model* model, const void* const* inputs, "
                   "void* const* outputs,\n    void* workspace, cudaStream_t stream);"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("#define TINY_ERROR_DEVICE 4"), std::string::npos);
}

TEST_F(CudaLibrary, CheckRunsInTheEmulator) {
  CommandResult r = run_command(tlmc("-O0 --target cuda-sm90 --check " + dir.file("tiny.yaml")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
  // -O1 compiles the CUDA language model's schedules (the default -O2 ranks by estimate:
  // cuda_schedules_are_ranked_by_estimate.cc).
  CommandResult o1 = run_command(tlmc("-O1 --target cuda-sm90 --check " + dir.file("tiny.yaml")));
  ASSERT_EQ(o1.exit_code, 0) << o1.out;
  EXPECT_NE(o1.out.find("check passed"), std::string::npos) << o1.out;
  CommandResult layout = run_command(
      tlmc("-O0 --target cuda-sm90 --activation-layout blocked " + dir.file("tiny.yaml")));
  EXPECT_EQ(layout.exit_code, 1);
  EXPECT_NE(layout.out.find("a CUDA target keeps the model's layout"), std::string::npos);
}

// Where a block may declare less shared memory statically than a kernel's tiles take (here
// lowered to 4 KiB, below the -O0 product's 5 KiB), the kernel's arrays lie in dynamic
// shared memory: NAME_init opts the kernel in, the launch asks for it, the emulated check
// passes, and nvcc builds the archive.
TEST_F(CudaLibrary, SharedMemoryBeyondTheStaticLimitIsDynamic) {
  write_file(dir.file("wide.yaml"), R"(tlmc: 1
name: wide
inputs:
  x: {shape: [128, 256]}
weights:
  w: {shape: [256, 128], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [y]}
outputs: [y]
)");
  const std::string args =
      "-O0 --target cuda-sm80 --target-option smem/block=4K " + dir.file("wide.yaml");
  CommandResult r = run_command(tlmc(args + " --check"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
  r = run_command(tlmc(args + " --emit source -o " + dir.file("src")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string cu = read_file(dir.file("src/wide.cu"));
  EXPECT_NE(cu.find("TLMC_DYNAMIC_SHARED_BASE(tlmc_smem);"), std::string::npos) << cu;
  EXPECT_NE(cu.find("cudaFuncSetAttribute(wide_k0_g0, "
                    "cudaFuncAttributeMaxDynamicSharedMemorySize, 5120)"),
            std::string::npos)
      << cu;
  EXPECT_NE(cu.find("), 5120u, stream"), std::string::npos) << cu;
  if (nvcc().empty()) GTEST_SKIP() << "no nvcc here: the archive was not built";
  CommandResult lib = run_command(tlmc(args + " -o " + dir.file("libwide.a")));
  EXPECT_EQ(lib.exit_code, 0) << lib.out;
}

// A program that inits and runs the library, printing the codes.
const char* kProgram = R"(#include <cstdio>
#include "tiny.h"
int main() {
  tiny_model* model = nullptr;
  const int init = tiny_init(&model);
  std::printf("init %d\n", init);
  if (init != 0) return 0;
  void *x = nullptr, *y = nullptr, *ws = nullptr;
  cudaMalloc(&x, TINY_INPUT0_BYTES);
  cudaMalloc(&y, TINY_OUTPUT0_BYTES);
  cudaMalloc(&ws, tiny_workspace_size() + 1);
  const void* inputs[] = {x};
  void* outputs[] = {y};
  std::printf("run %d\n", tiny_run(model, inputs, outputs, ws));
  std::printf("misaligned %d\n", tiny_run(model, inputs, outputs, (char*)ws + 4));
  tiny_free(model);
  return 0;
}
)";

TEST_F(CudaLibrary, ArchiveLinksWithTheCudaRuntimeAlone) {
  if (nvcc().empty()) GTEST_SKIP() << "no nvcc here: --emit lib for a CUDA target needs it";
  CommandResult r = run_command(
      tlmc("-O0 --target cuda-sm80 " + dir.file("tiny.yaml") + " -o " + dir.file("lib/libtiny.a")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(count_entries(dir.file("lib")), 2) << "libtiny.a and tiny.h";
  write_file(dir.file("main.cc"), kProgram);
  const std::string cuda = fs::path(nvcc()).parent_path().parent_path().string();
  CommandResult link =
      run_command("c++ -std=c++17 " + dir.file("main.cc") + " -I" + dir.file("lib") + " -I" + cuda +
                  "/include " + dir.file("lib/libtiny.a") + " -L" + cuda +
                  "/lib64 -lcudart_static -ldl -lpthread -lrt -o " + dir.file("main") + " 2>&1");
  ASSERT_EQ(link.exit_code, 0) << link.out;
  CommandResult run = run_command(dir.file("main"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  if (run.out == "init 3\n") return;  // no GPU here: CUDA refused, as NAME_ERROR_CUDA
  EXPECT_EQ(run.out, "init 0\nrun 0\nmisaligned 1\n");
}

// The emulated library, made to meet a sticky error before it runs: a kernel of the
// program's own skips a barrier.
const char* kStickyProgram = R"(#include <cstdio>
#include "tiny.h"
#include "tiny_cuda.h"
__global__ void skips_barrier(int live) {
  if ((int)threadIdx.x >= live) return;
  __syncthreads();
}
int main() {
  tiny_model* model = nullptr;
  std::printf("init %d\n", tiny_init(&model));
  void *x = nullptr, *y = nullptr, *ws = nullptr;
  cudaMalloc(&x, TINY_INPUT0_BYTES);
  cudaMalloc(&y, TINY_OUTPUT0_BYTES);
  cudaMalloc(&ws, tiny_workspace_size() + 1);
  const void* inputs[] = {x};
  void* outputs[] = {y};
  std::printf("run %d\n", tiny_run(model, inputs, outputs, ws));
  std::printf("launch %d\n", (int)TLMC_LAUNCH(skips_barrier, dim3(1), dim3(64), 0, nullptr, 3));
  std::printf("run %d\n", tiny_run(model, inputs, outputs, ws));
  std::printf("run %d\n", tiny_run(model, inputs, outputs, ws));
  return 0;
}
)";

TEST_F(CudaLibrary, StickyErrorsAreReportedOnEveryLaterRun) {
  CommandResult r = run_command(
      tlmc("-O0 --target cuda-sm80 " + dir.file("tiny.yaml") + " -o " + dir.file("src")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  write_file(dir.file("src/main.cc"), kStickyProgram);
  const std::string src = dir.file("src");
  CommandResult build = run_command(
      "cd " + src + " && c++ -std=c++17 -x c++ -I" + std::string(TLMC_SOURCE_DIR) +
      "/runtime/cuda_emulation -I. tiny.cu main.cc -x none tiny_weights.S -o main 2>&1");
  ASSERT_EQ(build.exit_code, 0) << build.out;
  CommandResult run = run_command(dir.file("src/main"));
  EXPECT_EQ(run.out, "init 0\nrun 0\nlaunch 719\nrun 4\nrun 4\n");
}

}  // namespace
}  // namespace tlmc::test
