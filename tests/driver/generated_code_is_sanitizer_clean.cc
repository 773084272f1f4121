// `tlmc --check --sanitize`: the library's C built with -fsanitize=address,undefined and run
// as a program of its own, every buffer an allocation of its exact size. The run reports a
// read one element past an input and a signed overflow (so a clean run means something), and
// every example is clean at -O0 and with schedules drawn at random from its spaces.
#include <gtest/gtest.h>

#include <cstring>

#include "support/test_support.h"
#include "toolchain/sanitized_run.h"

namespace tlmc::test {
namespace {

// A library "m" of one input of 4 floats and one output of 1 float, whose run is `body`.
toolchain::SanitizedRun run_library(TempDir& dir, const std::string& body) {
  write_file(dir.file("m.h"),
             "#include <stddef.h>\nsize_t m_workspace_size(void);\n"
             "int m_run(const void* const* inputs, void* const* outputs, void* workspace);\n");
  write_file(dir.file("m.c"),
             "#include <limits.h>\n#include \"m.h\"\nsize_t m_workspace_size(void) { return 16; }\n"
             "int m_run(const void* const* inputs, void* const* outputs, void* workspace) {\n"
             "  const float* a = inputs[0]; float* y = outputs[0]; (void)workspace;\n  " +
                 body + "\n  return 0;\n}\n");
  std::vector<uint8_t> input(16);
  const float values[4] = {1, 2, 3, 4};
  std::memcpy(input.data(), values, sizeof values);
  return toolchain::run_sanitized(dir.path(), {"m.c"}, "m.h", "m", ir::host_target(), {input}, {4},
                                  60);
}

TEST(SanitizedRun, ReportsWhatTheSanitizersFind) {
  TempDir dir;
  toolchain::SanitizedRun clean = run_library(dir, "y[0] = a[0] + a[3];");
  ASSERT_TRUE(clean.ok) << clean.message;
  float y = 0;
  std::memcpy(&y, clean.outputs.at(0).data(), 4);
  EXPECT_EQ(y, 5.0f);

  toolchain::SanitizedRun past = run_library(dir, "y[0] = a[4];");
  EXPECT_FALSE(past.ok);
  EXPECT_NE(past.message.find("heap-buffer-overflow"), std::string::npos) << past.message;

  toolchain::SanitizedRun workspace = run_library(dir, "((char*)workspace)[16] = 1; y[0] = a[0];");
  EXPECT_FALSE(workspace.ok);
  EXPECT_NE(workspace.message.find("heap-buffer-overflow"), std::string::npos) << workspace.message;

  toolchain::SanitizedRun overflow =
      run_library(dir, "volatile int big = INT_MAX; int x = big + (int)a[0]; y[0] = (float)x;");
  EXPECT_FALSE(overflow.ok);
  EXPECT_NE(overflow.message.find("signed integer overflow"), std::string::npos)
      << overflow.message;
}

class SanitizedExample : public ::testing::TestWithParam<std::string> {};

TEST_P(SanitizedExample, IsCleanAtO0AndUnderRandomSchedules) {
  const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/" + GetParam() + ".yaml";
  for (const std::string& extra : {std::string(), std::string(" --random-schedule-seed 1"),
                                   std::string(" --random-schedule-seed 2")}) {
    CommandResult r =
        run_command(std::string(TLMC_EXE) + " -O0 " + model + " --check --sanitize" + extra);
    EXPECT_EQ(r.exit_code, 0) << extra << "\n" << r.out;
    EXPECT_NE(r.out.find("the library ran built with -fsanitize=address,undefined, with no "
                         "report\ncheck passed"),
              std::string::npos)
        << extra << "\n"
        << r.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, SanitizedExample,
                         ::testing::Values("mlp", "resnet_block", "transformer_layer"));

TEST(SanitizedCheck, AskedWrongIsAUsageError) {
  const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/mlp.yaml";
  CommandResult alone = run_command(std::string(TLMC_EXE) + " -O0 " + model + " --sanitize");
  EXPECT_EQ(alone.exit_code, 2) << alone.out;
  EXPECT_NE(alone.out.find("--sanitize is a way to run --check: give both"), std::string::npos)
      << alone.out;
  CommandResult cuda = run_command(std::string(TLMC_EXE) + " -O0 " + model +
                                   " --target cuda-sm80 --check --sanitize");
  EXPECT_EQ(cuda.exit_code, 2) << cuda.out;
}

}  // namespace
}  // namespace tlmc::test
