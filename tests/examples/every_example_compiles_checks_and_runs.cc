// Every bundled example, end to end: compiled to a library, checked against the reference
// interpreter, linked with examples/run_model.c under gcc and clang, and run.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace tlmc::test {
namespace {

class Example : public ::testing::TestWithParam<const char*> {};

TEST_P(Example, CompilesChecksLinksAndRuns) {
  const std::string name = GetParam();
  const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/" + name + ".yaml";
  TempDir dir;
  CommandResult check = run_command(std::string(TLMC_EXE) + " -O0 " + model + " --check");
  EXPECT_EQ(check.exit_code, 0) << check.out;
  EXPECT_NE(check.out.find("check passed"), std::string::npos) << check.out;
  CommandResult lib =
      run_command(std::string(TLMC_EXE) + " -O0 " + model + " -o " + dir.file("lib" + name + ".a"));
  ASSERT_EQ(lib.exit_code, 0) << lib.out;
  for (const char* cc : {"gcc", "clang"}) {
    const std::string exe = dir.file(std::string("run_") + cc);
    CommandResult b =
        run_command(std::string(cc) + " -std=c11 -O2 -Wall -Wextra -Werror -DMODEL=" + name +
                    " -I" + dir.path() + " " + TLMC_SOURCE_DIR + "/examples/run_model.c " +
                    dir.file("lib" + name + ".a") + " -lpthread -lm -o " + exe);
    ASSERT_EQ(b.exit_code, 0) << cc << ": " << b.out;
    CommandResult r = run_command(exe + " 3");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("latency: median"), std::string::npos) << r.out;
  }
}

// Every schedule the spaces can produce is correct: schedules drawn at random from each
// kernel's spaces, for every example, through the real command's --check.
TEST_P(Example, RandomSchedulesFromTheSpacesCheck) {
  const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/" + GetParam() + ".yaml";
  for (int seed = 0; seed < 4; ++seed) {
    CommandResult check = run_command(std::string(TLMC_EXE) + " -O0 " + model +
                                      " --check --random-schedule-seed " + std::to_string(seed));
    EXPECT_EQ(check.exit_code, 0) << "seed " << seed << ": " << check.out;
  }
}

// The same for a CUDA target: the -O0 library and two drawn at random check in the CPU
// emulator (threads and blocks in reverse order for the second), and nvcc, where it is
// found, compiles the library for sm_90 with warnings as errors.
TEST_P(Example, CudaLibraryChecksInTheEmulator) {
  const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/" + GetParam() + ".yaml";
  for (int seed = -1; seed < 2; ++seed) {
    const std::string order = seed == 1 ? "TLMC_EMULATION_ORDER=reverse " : "";
    CommandResult check = run_command(
        order + TLMC_EXE + " -O0 --target cuda-sm80 " + model + " --check" +
        (seed >= 0 ? " --random-schedule-seed " + std::to_string(seed) : std::string()));
    EXPECT_EQ(check.exit_code, 0) << "seed " << seed << ": " << check.out;
    EXPECT_NE(check.out.find("check passed"), std::string::npos) << check.out;
  }
  if (run_command("command -v nvcc || ls /usr/local/cuda/bin/nvcc").exit_code != 0) return;
  TempDir dir;
  CommandResult lib = run_command(std::string(TLMC_EXE) + " -O0 --target cuda-sm90 " + model +
                                  " -o " + dir.file("libm.a"));
  EXPECT_EQ(lib.exit_code, 0) << lib.out;
}

INSTANTIATE_TEST_SUITE_P(Bundled, Example,
                         ::testing::Values("mlp", "resnet_block", "transformer_layer"));

}  // namespace
}  // namespace tlmc::test
