// bench/gpu_session.sh, the one command a machine with a GPU runs: where there is no GPU it
// says so in its summary and exits 3 before building or running anything.
#include <gtest/gtest.h>

#include <string>

#include "ir/cuda_device.h"
#include "support/test_support.h"
#include "toolchain/cc.h"

namespace tlmc::test {
namespace {

TEST(GpuSession, StopsWithStatus3WhereThereIsNoGpu) {
  std::string why;
  if (ir::find_cuda_gpu(&why)) GTEST_SKIP() << "a GPU is here: the session would run whole";
  TempDir dir;
  const CommandResult r =
      run_command("PATH=/usr/bin:/bin bash " +
                  toolchain::shell_quote(std::string(TLMC_SOURCE_DIR) + "/bench/gpu_session.sh") +
                  " run " + toolchain::shell_quote(dir.file("out")) + " 2>&1");
  EXPECT_EQ(r.exit_code, 3) << r.out;
  const std::string summary = read_file(dir.file("out/gpu_session.txt"));
  EXPECT_NE(summary.find("\ngpu "), std::string::npos) << summary;
  EXPECT_NE(summary.find("failed"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("unpack"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("build"), std::string::npos) << summary;
}

TEST(GpuSession, RefusesAnUnknownMode) {
  const CommandResult r = run_command(
      "bash " + toolchain::shell_quote(std::string(TLMC_SOURCE_DIR) + "/bench/gpu_session.sh") +
      " tune 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("usage: bash bench/gpu_session.sh run [OUT] | pack | unpack"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace tlmc::test
