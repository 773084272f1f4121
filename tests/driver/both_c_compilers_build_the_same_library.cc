// --cc in-process (Clang's libraries inside tlmc, the default) and --cc system ($CC, else
// cc) both build a library and a relocatable object that a C program links with -lpthread
// -lm alone, and whose results agree; the in-process build starts no compiler process.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace tlmc::test {
namespace {

const char* kHarness = R"(#include <stdio.h>
#include <stdlib.h>
#include "mlp.h"

enum { IN = MLP_INPUT0_BYTES / 4, OUT = MLP_OUTPUT0_BYTES / 4 };

int main(void) {
  static float x[IN], y[OUT];
  for (int i = 0; i < IN; ++i) x[i] = (float)((i * 37) % 97) / 48.0f - 1.0f;
  void* ws = aligned_alloc(64, mlp_workspace_size() + 64);
  const void* in[1] = {x};
  void* out[1] = {y};
  if (mlp_run(in, out, ws) != 0) return 2;
  for (int i = 0; i < OUT; ++i) printf("%.4f\n", y[i]);
  free(ws);
  return 0;
}
)";

std::string build_and_run(const TempDir& dir, const std::string& cc, const std::string& product) {
  const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/mlp.yaml";
  // With CC naming a command that does not exist, only the in-process build can succeed.
  const std::string env = cc == "in-process" ? "CC=/nonexistent/cc " : "";
  CommandResult c = run_command(
      env + TLMC_EXE + " -O0 " + model + " --cc " + cc + " -o " + dir.file(product) +
      (product.size() > 2 && product.substr(product.size() - 2) == ".o" ? " --emit=obj" : ""));
  EXPECT_EQ(c.exit_code, 0) << c.out;
  write_file(dir.file("main.c"), kHarness);
  CommandResult b = run_command("cc -std=c11 -O2 -Wall -Wextra -Werror -I" + dir.path() + " " +
                                dir.file("main.c") + " " + dir.file(product) +
                                " -lpthread -lm -o " + dir.file("main"));
  EXPECT_EQ(b.exit_code, 0) << b.out;
  CommandResult r = run_command(dir.file("main"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  return r.out;
}

TEST(CCompilers, InProcessAndSystemBuildLibrariesThatAgree) {
  TempDir a, b, c;
  const std::string in_process = build_and_run(a, "in-process", "libmlp.a");
  const std::string system = build_and_run(b, "system", "libmlp.a");
  const std::string object = build_and_run(c, "in-process", "mlp.o");
  ASSERT_FALSE(in_process.empty());
  EXPECT_EQ(in_process, system);
  EXPECT_EQ(in_process, object);
}

TEST(CCompilers, AnUnknownOneIsAUsageError) {
  TempDir dir;
  const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/mlp.yaml";
  CommandResult c =
      run_command(std::string(TLMC_EXE) + " -O0 " + model + " --cc gcc -o " + dir.file("libm.a"));
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_EQ(c.out,
            "tlmc: error: --cc takes in-process or system, not 'gcc'\nRun 'tlmc --help' for the "
            "options.\n");
  EXPECT_EQ(count_entries(dir.path()), 0);
}

}  // namespace
}  // namespace tlmc::test
