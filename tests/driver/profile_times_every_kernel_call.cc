// `tlmc --profile`: the library as a build would ship it, run with a timer around each
// kernel call, reports every call of the run once, with a positive time.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>

#include "support/test_support.h"

namespace tlmc::test {
namespace {

std::string tlmc(const std::string& args) { return std::string(TLMC_EXE) + " " + args; }

// The kernel calls in NAME_run of the generated C.
int calls_in_source(const std::string& c, const std::string& name) {
  const std::regex call("^  " + name + "_k[0-9]+\\(");
  std::istringstream in(c);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += std::regex_search(line, call) ? 1 : 0;
  return n;
}

TEST(Profile, EveryCallOfTheRunIsTimedOnce) {
  TempDir dir;
  const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/resnet_block.yaml";
  CommandResult src = run_command(tlmc("-O0 " + model + " --emit=source -o " + dir.file("src")));
  ASSERT_EQ(src.exit_code, 0) << src.out;
  const int calls = calls_in_source(read_file(dir.file("src/resnet_block.c")), "resnet_block");
  ASSERT_GE(calls, 3);

  CommandResult r = run_command(tlmc("-O0 " + model + " --profile"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(" call kernel  workload"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("one run: "), std::string::npos) << r.out;
  // call, kernel, workload key, us, share, GFLOP/s, GB/s, x copy, nodes
  const std::regex row(
      R"(^ *([0-9]+) +([0-9]+)  ([0-9a-f]{16}) +([0-9.]+) +[0-9.]+% +[0-9.]+ +([0-9.]+) +([0-9.]+)  (.+)$)");
  std::set<int> seen;
  std::istringstream in(r.out);
  bool conv = false;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    EXPECT_TRUE(seen.insert(std::stoi(m[1])).second) << "call " << m[1] << " twice:\n" << r.out;
    EXPECT_GT(std::stod(m[4]), 0) << line;
    // Every call moves bytes, and a plain copy of as many was timed beside it.
    EXPECT_GT(std::stod(m[5]), 0) << line;
    EXPECT_GT(std::stod(m[6]), 0) << line;
    conv = conv || m[7].str().find("Conv '") != std::string::npos;
  }
  EXPECT_EQ(static_cast<int>(seen.size()), calls) << r.out;
  EXPECT_TRUE(seen.empty() || *seen.rbegin() == calls - 1) << r.out;
  EXPECT_TRUE(conv) << "the nodes of each call are named:\n" << r.out;
}

TEST(Profile, IsNotAskedTogetherWithCheck) {
  const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/mlp.yaml";
  CommandResult r = run_command(tlmc("-O0 " + model + " --profile --check"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--check and --profile are two runs"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tlmc::test
