// Same inputs, same target: byte-identical output (design.md), for sources and archives.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace tlmc::test {
namespace {

TEST(Determinism, SourcesAndArchiveAreIdenticalAcrossRuns) {
  TempDir dir;
  const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/transformer_layer.yaml";
  for (const char* run : {"a", "b"}) {
    const std::string out = dir.file(run);
    CommandResult s = run_command(std::string(TLMC_EXE) + " -O0 " + model +
                                  " --target x86-64-avx2 -o " + out + "/src");
    ASSERT_EQ(s.exit_code, 0) << s.out;
    CommandResult l = run_command(std::string(TLMC_EXE) + " -O0 " + model +
                                  " --target x86-64-avx2 -o " + out + "/lib/libt.a");
    ASSERT_EQ(l.exit_code, 0) << l.out;
  }
  for (const char* f :
       {"src/transformer_layer.c", "src/transformer_layer.h", "src/transformer_layer_weights.bin",
        "src/transformer_layer_runtime.c", "lib/libt.a"}) {
    const std::string a = read_file(dir.file(std::string("a/") + f)),
                      b = read_file(dir.file(std::string("b/") + f));
    EXPECT_FALSE(a.empty()) << f;
    EXPECT_TRUE(a == b) << f << " differs between two compilations";
  }
}

}  // namespace
}  // namespace tlmc::test
