// --precision bf16 from the command line: refused with the reason where the target has no
// bf16 products (tlmc does not emulate them) or is a GPU; a model's products computed in
// bfloat16 where the host has them, checked against the float32 model within bfloat16's
// tolerance and against the bfloat16 model exactly; its graph shows the conversions.
#include <gtest/gtest.h>

#include <filesystem>

#include "ir/target.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

namespace fs = std::filesystem;

std::string tlmc(const std::string& args) { return std::string(TLMC_EXE) + " " + args; }

const std::string kMlp = std::string(TLMC_SOURCE_DIR) + "/examples/mlp.yaml";

TEST(Bf16Precision, TargetsWithoutBf16ProductsAreRefused) {
  TempDir dir;
  CommandResult r = run_command(tlmc(
      "-O0 " + kMlp + " --precision bf16 --target x86-64-avx512 -o " + dir.file("out/libmlp.a")));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("tlmc: error: --precision bf16 needs a CPU with AVX512_BF16 or AMX, and "
                       "target x86-64-avx512 has neither: name one that has them (--target "
                       "x86-64-avx512-bf16 or x86-64-amx), or use --precision fp32; tlmc does "
                       "not emulate bf16 products"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(count_entries(dir.file("out")), 0);
  r = run_command(tlmc("-O0 " + kMlp + " --precision bf16 --target cuda-sm80 --emit source -o " +
                       dir.file("cu")));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("--precision bf16 is for CPU targets"), std::string::npos) << r.out;
  // Usage: the precision's words, and its options without it.
  EXPECT_EQ(run_command(tlmc("-O0 " + kMlp + " --precision fp16")).exit_code, 2);
  EXPECT_EQ(run_command(tlmc("-O0 " + kMlp + " --keep-fp32 fc1")).exit_code, 2);
  EXPECT_EQ(run_command(tlmc("-O0 " + kMlp + " --precision bf16 --precision-ops gemm")).exit_code,
            2);
  EXPECT_EQ(run_command(tlmc("-O0 " + kMlp + " --bf16-storage shared")).exit_code, 2);
  r = run_command(tlmc("-O0 " + kMlp + " --precision bf16 --bf16-storage all"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("--bf16-storage takes products or shared, not 'all'"), std::string::npos)
      << r.out;
}

TEST(Bf16Precision, TheHostsBf16ProductsAreCheckedBothWays) {
  const ir::Target host = ir::host_target();
  if (host.bf16 == ir::Bf16Unit::None) GTEST_SKIP() << "this CPU has neither AVX512_BF16 nor AMX";
  CommandResult r = run_command(tlmc("-O0 " + kMlp + " --precision bf16 --check"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // The summary says how the kernels compute; a float32 build says nothing of it.
  EXPECT_NE(r.out.find("tlmc: bf16: 2 of 4 kernels compute their products by "), std::string::npos)
      << r.out;
  EXPECT_EQ(run_command(tlmc("-O0 " + kMlp + " --check")).out.find("tlmc: bf16:"),
            std::string::npos);
  EXPECT_NE(r.out.find("against the bfloat16 model it compiles (2 products in series)  ok"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("check passed (tolerance: abs 1e-05 + rel 0.016 of max(|want|, rms)"),
            std::string::npos)
      << r.out;
  TempDir dir;
  r = run_command(tlmc("-O0 " + kMlp + " --precision bf16 --keep-fp32 fc2 --dump graph -o " +
                       dir.file("out/libmlp.a")));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("image.bf16: bfloat16[8, 784] = Cast(image) {to: 16}"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("weight fc1.w.bf16: bfloat16[784, 256]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("= Gemm(act, fc2.w, fc2.b)"), std::string::npos) << r.out;
  // --dump precision says why a kernel's products stayed float32.
  r = run_command(tlmc("-O0 " + kMlp + " --precision bf16 --keep-fp32 fc2 --dump precision -o " +
                       dir.file("out/libmlp.a")));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("): float32 (Gemm 'fc2': kept by --keep-fp32)"), std::string::npos) << r.out;
  write_file(dir.file("narrow.yaml"), R"(tlmc: 1
name: narrow
inputs:
  x: {shape: [1, 3, 9, 9]}
weights:
  w: {shape: [8, 3, 3, 3], init: {uniform: [-1, 1]}, seed: 1}
nodes:
  - {name: stem, op: Conv, inputs: [x, w], outputs: [y], attrs: {pads: [1, 1, 1, 1]}}
outputs: [y]
)");
  r = run_command(tlmc("-O0 " + dir.file("narrow.yaml") + " --precision bf16 --dump precision -o " +
                       dir.file("narrow/libnarrow.a")));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("): float32 (Conv 'stem': a window over 3 input channels whose 3 columns "
                       "make 9 channels, fewer than 16)"),
            std::string::npos)
      << r.out;
}

// -O2 measures bf16 candidates in its worker (the packed weights travel with them, zeroed
// past a reduction of 48 along a 1 x 1 convolution's weight rows) and checks each against
// the bfloat16 model; the library it builds passes --check.
TEST(Bf16Precision, O2MeasuresCandidatesOfPointwiseConvolutions) {
  const ir::Target host = ir::host_target();
  if (host.bf16 == ir::Bf16Unit::None) GTEST_SKIP() << "this CPU has neither AVX512_BF16 nor AMX";
  TempDir dir;
  write_file(dir.file("pw.yaml"), R"(tlmc: 1
name: pw
inputs:
  x: {shape: [1, 48, 10, 12]}
weights:
  w: {shape: [40, 48, 1, 1], init: {uniform: [-1, 1]}, seed: 1}
  b: {shape: [40], init: {uniform: [-1, 1]}, seed: 2}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [c]}
  - {op: Relu, inputs: [c], outputs: [y]}
outputs: [y]
)");
  const CommandResult r =
      run_command(tlmc("-O2 " + dir.file("pw.yaml") + " --precision bf16 --trials 12 --tuning-db " +
                       dir.file("t.db") + " --check --dump precision -o " + dir.file("out")));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("Conv 1x1 48->40 10x12 + Relu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
}

// Models stored in bfloat16 or float16: their own products accumulate in float32 and round
// to their type, as the reference computes them; a bfloat16 model's by the unit where the
// host has one (widened where it has not), a float16 model's in float32, or in bfloat16
// with --precision bf16; the other operators (Relu, Softmax) on 16-bit tensors widened to
// float32 and rounded back. Products of two layers in series, with a bias in the models' type.
TEST(Bf16Precision, ModelsStoredIn16BitFloatsAreCheckedAgainstTheReference) {
  const ir::Target host = ir::host_target();
  TempDir dir;
  for (const std::string type : {"bfloat16", "float16"}) {
    SCOPED_TRACE(type);
    write_file(dir.file(type + ".yaml"), R"(tlmc: 1
name: own
inputs:
  x: {shape: [1, 32, 6, 7], dtype: )" + type +
                                             R"(}
weights:
  w: {shape: [48, 32, 3, 3], dtype: )" + type +
                                             R"(, init: {uniform: [-0.2, 0.2]}, seed: 1}
  b: {shape: [48], dtype: )" + type + R"(, init: {uniform: [-1, 1]}, seed: 2}
  v: {shape: [48, 20], dtype: )" + type + R"(, init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c], outputs: [r]}
  - {op: Transpose, inputs: [r], outputs: [t], attrs: {perm: [0, 2, 3, 1]}}
  - {op: MatMul, inputs: [t, v], outputs: [m]}
  - {op: Softmax, inputs: [m], outputs: [y]}
outputs: [y]
)");
    CommandResult r = run_command(
        tlmc("-O0 " + dir.file(type + ".yaml") + " --check --dump precision -o " + dir.file(type)));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
    if (type == "bfloat16" && host.bf16 != ir::Bf16Unit::None) {
      EXPECT_NE(r.out.find("tlmc: bf16: 2 of "), std::string::npos) << r.out;
    }
    if (type == "float16") {
      EXPECT_EQ(r.out.find("tlmc: bf16:"), std::string::npos) << r.out;
      if (host.bf16 == ir::Bf16Unit::None) continue;
      r = run_command(tlmc("-O0 " + dir.file(type + ".yaml") + " --precision bf16 --check -o " +
                           dir.file("demoted")));
      EXPECT_EQ(r.exit_code, 0) << r.out;
      EXPECT_NE(r.out.find("tlmc: bf16: 2 of "), std::string::npos) << r.out;
    }
  }
}

}  // namespace
}  // namespace tlmc::test
