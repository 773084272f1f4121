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
    CommandResult r = run_command(std::string(TLMC_EXE) + " -O0 " + model + " --target " + target +
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

// Integer and bool kernels: comparisons, selects over bool tensors, casts, integer division,
// index arithmetic of Slice, Pad and Split.
const char* kIntegerAndBoolModel = R"(tlmc: 1
name: int_bool
inputs:
  x: {shape: [3, 17]}
  i: {shape: [3, 17], dtype: int64}
  b: {shape: [17], dtype: bool}
weights:
  pads: {shape: [4], dtype: int64, data: [1, 2, 1, 2]}
  starts: {shape: [1], dtype: int64, data: [-1]}
  ends: {shape: [1], dtype: int64, data: [-9223372036854775808]}
  axes: {shape: [1], dtype: int64, data: [1]}
  steps: {shape: [1], dtype: int64, data: [-3]}
nodes:
  - {op: Less, inputs: [x, i_f], outputs: [lt]}
  - {op: Cast, inputs: [i], outputs: [i_f], attrs: {to: 1}}
  - {op: And, inputs: [lt, b], outputs: [both]}
  - {op: Not, inputs: [both], outputs: [neither]}
  - {op: Where, inputs: [neither, x, i_f], outputs: [w]}
  - {op: Div, inputs: [i, i], outputs: [q]}
  - {op: Neg, inputs: [q], outputs: [nq]}
  - {op: Cast, inputs: [w], outputs: [w8], attrs: {to: 3}}
  - {op: Cast, inputs: [x], outputs: [xb], attrs: {to: 9}}
  - {op: Pad, inputs: [w, pads], outputs: [p], attrs: {mode: reflect}}
  - {op: Slice, inputs: [i, starts, ends, axes, steps], outputs: [s]}
  - {op: Split, inputs: [x], outputs: [s0, s1, s2]}
outputs: [nq, w8, xb, p, s, s0, s1, s2]
)";

TEST_P(GeneratedC, IntegerAndBoolKernelsCompileWithoutWarnings) {
  TempDir dir;
  const std::string target = GetParam();
  const std::string model = dir.file("int_bool.yaml");
  write_file(model, kIntegerAndBoolModel);
  CommandResult r = run_command(std::string(TLMC_EXE) + " -O0 " + model + " --target " + target +
                                " -o " + dir.file("out"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* cc : {"gcc", "clang"}) {
    CommandResult c =
        run_command(std::string(cc) + " -std=c11 -O2 -Wall -Wextra -Werror " + march(target) +
                    " -c " + dir.file("out/int_bool.c") + " -o " + dir.file("x.o"));
    EXPECT_EQ(c.exit_code, 0) << cc << " " << target << ":\n" << c.out;
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, GeneratedC,
                         ::testing::Values("x86-64", "x86-64-avx2", "x86-64-avx512"));

}  // namespace
}  // namespace tlmc::test
