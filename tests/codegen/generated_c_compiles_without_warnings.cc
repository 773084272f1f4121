// The generated C compiles cleanly under gcc and clang at -Wall -Wextra -Werror, for the
// plain-C target and both SIMD widths.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace tlmc::test {
namespace {

class GeneratedC : public ::testing::TestWithParam<const char*> {};

std::string march(const std::string& target) {
  if (target == "x86-64") return "-march=x86-64";
  if (target == "x86-64-avx2") return "-march=haswell";
  return "-march=skylake-avx512";
}

TEST_P(GeneratedC, CompilesWithoutWarnings) {
  TempDir dir;
  const std::string target = GetParam();
  for (const char* example : {"resnet_block", "transformer_layer"}) {
    const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/" + example + ".yaml";
    CommandResult r = run_command(std::string(TLMC_EXE) + " " + model + " --target " + target +
                                  " -o " + dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.out;
    for (const char* cc : {"gcc", "clang"}) {
      for (const std::string& file :
           {std::string(example) + ".c", std::string(example) + "_runtime.c"}) {
        CommandResult c =
            run_command(std::string(cc) + " -std=c11 -O2 -Wall -Wextra -Werror " + march(target) +
                        " -c " + dir.file(file) + " -o " + dir.file("x.o"));
        EXPECT_EQ(c.exit_code, 0) << cc << " " << target << " " << file << ":\n" << c.out;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, GeneratedC,
                         ::testing::Values("x86-64", "x86-64-avx2", "x86-64-avx512"));

}  // namespace
}  // namespace tlmc::test
