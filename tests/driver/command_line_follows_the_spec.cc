// The `tlmc` command as a build script sees it (spec/driver.md): outputs for each --emit,
// exit statuses, diagnostics, and no output left behind on failure.
#include <gtest/gtest.h>

#include <filesystem>

#include "ir/te.h"
#include "ir/te_text.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

namespace fs = std::filesystem;

const char* kModel = R"(tlmc: 1
name: tiny
inputs:
  x: {shape: [2, 8]}
weights:
  w: {shape: [8, 4], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: Relu, inputs: [h], outputs: [y]}
outputs: [y]
)";

std::string tlmc(const std::string& args) { return std::string(TLMC_EXE) + " " + args; }

class CommandLine : public ::testing::Test {
 protected:
  void SetUp() override { write_file(dir.file("tiny.yaml"), kModel); }
  TempDir dir;
};

TEST_F(CommandLine, LibOutputWritesArchiveAndHeader) {
  CommandResult r =
      run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " -o " + dir.file("out/libtiny.a")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(dir.file("out/libtiny.a")));
  EXPECT_TRUE(fs::exists(dir.file("out/tiny.h")));
  EXPECT_EQ(count_entries(dir.file("out")), 2) << "nothing else, no staging folder left";
  const std::string header = read_file(dir.file("out/tiny.h"));
  EXPECT_NE(header.find(
                "int tiny_run(const void* const* inputs, void* const* outputs, void* workspace);"),
            std::string::npos);
  EXPECT_NE(header.find("size_t tiny_workspace_size(void);"), std::string::npos);
  EXPECT_NE(header.find("#define TINY_INPUT0_SHAPE {2, 8}"), std::string::npos);
  EXPECT_NE(header.find("#define TINY_OUTPUT0_SHAPE {2, 4}"), std::string::npos);
}

TEST_F(CommandLine, SourceOutputWritesEverySourceFile) {
  CommandResult r =
      run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " -o " + dir.file("src") + " --name net"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* f :
       {"net.h", "net.c", "net_runtime.h", "net_runtime.c", "net_weights.S", "net_weights.bin"})
    EXPECT_TRUE(fs::exists(dir.file(std::string("src/") + f))) << f;
  EXPECT_EQ(fs::file_size(dir.file("src/net_weights.bin")), 8u * 4u * 4u);
}

TEST_F(CommandLine, HeaderAndObjectOutputs) {
  ASSERT_EQ(
      run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " --emit=header -o " + dir.file("api.h")))
          .exit_code,
      0);
  EXPECT_TRUE(fs::exists(dir.file("api.h")));
  CommandResult r = run_command(
      tlmc("-O0 " + dir.file("tiny.yaml") + " --emit=obj -o " + dir.file("obj/tiny.o")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(dir.file("obj/tiny.o")));
  EXPECT_TRUE(fs::exists(dir.file("obj/tiny.h")));
}

TEST_F(CommandLine, BadInputExitsOneWithPositionAndWritesNothing) {
  write_file(dir.file("bad.yaml"),
             std::string(kModel).replace(std::string(kModel).find("Relu"), 4, "Rleu"));
  CommandResult r =
      run_command(tlmc("-O0 " + dir.file("bad.yaml") + " -o " + dir.file("out/libtiny.a")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(dir.file("bad.yaml") + ":9:5: error: unknown operator 'Rleu'"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(count_entries(dir.file("out")), 0);
}

TEST_F(CommandLine, MissingModelIsBadInput) {
  CommandResult r = run_command(tlmc("-O0 " + dir.file("none.yaml")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("none.yaml: error: cannot read the model: no such file"), std::string::npos)
      << r.out;
}

TEST_F(CommandLine, BadUsageExitsTwo) {
  EXPECT_EQ(run_command(tlmc("")).exit_code, 2);
  EXPECT_EQ(run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " --no-such-option")).exit_code, 2);
  CommandResult r = run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " --target sparc"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("tlmc: error: unknown target 'sparc'"), std::string::npos) << r.out;
  EXPECT_EQ(run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " --emit=exe")).exit_code, 2);
  EXPECT_EQ(run_command(tlmc(dir.file("tiny.yaml") + " -O7")).exit_code, 2);
  CommandResult s = run_command(tlmc(dir.file("tiny.yaml") + " -O3 --search genetic"));
  EXPECT_EQ(s.exit_code, 2);
  EXPECT_EQ(s.out,
            "tlmc: error: --search takes evolutionary, unseeded or random, not 'genetic'\nRun "
            "'tlmc --help' "
            "for the options.\n");
  CommandResult l = run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " --activation-layout nhwc"));
  EXPECT_EQ(l.exit_code, 2);
  EXPECT_EQ(l.out,
            "tlmc: error: --activation-layout takes auto, model, channels-last or blocked, not "
            "'nhwc'\n"
            "Run 'tlmc --help' for the options.\n");
}

TEST_F(CommandLine, TargetsAreDescribedAndAdjusted) {
  CommandResult sm90 =
      run_command(tlmc("--print-target --target cuda-sm90 --target-option sms=114"));
  ASSERT_EQ(sm90.exit_code, 0) << sm90.out;
  EXPECT_EQ(sm90.out.rfind("gpu1 sm=90 sms=114 warp=32 ", 0), 0u) << sm90.out;
  CommandResult cpu =
      run_command(tlmc("--print-target --target x86-64 --target-option l2=512K --threads 3"));
  ASSERT_EQ(cpu.exit_code, 0) << cpu.out;
  EXPECT_NE(cpu.out.find(" cores=3 "), std::string::npos) << cpu.out;
  EXPECT_NE(cpu.out.find(" l2=512K "), std::string::npos) << cpu.out;
  CommandResult volta = run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " --target cuda-sm70"));
  EXPECT_EQ(volta.exit_code, 2);
  EXPECT_NE(volta.out.find("tlmc: error: CUDA 13 has no sm_70"), std::string::npos) << volta.out;
  CommandResult threads =
      run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " --target cuda-sm80 --threads 4"));
  EXPECT_EQ(threads.exit_code, 2);
  EXPECT_NE(threads.out.find("--threads sets the CPU threads"), std::string::npos) << threads.out;
  CommandResult bad = run_command(tlmc("--print-target --target cuda-sm80 --target-option sms=0"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("'0' is not a valid sms"), std::string::npos) << bad.out;
}

TEST_F(CommandLine, HelpAndVersion) {
  CommandResult v = run_command(tlmc("--version"));
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out, "tlmc 0.1.0\n");
  CommandResult h = run_command(tlmc("--help"));
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("--emit"), std::string::npos);
}

TEST_F(CommandLine, DepfileListsModelAndWeightFiles) {
  std::string bytes(8 * 4 * 4, '\0');
  write_file(dir.file("w.bin"), bytes);
  std::string model = kModel;
  model.replace(model.find("init: {uniform: [-1, 1]}, seed: 3"), 33, "file: w.bin");
  write_file(dir.file("m.yaml"), model);
  CommandResult r = run_command(tlmc("-O0 " + dir.file("m.yaml") + " -o " + dir.file("libtiny.a") +
                                     " --depfile " + dir.file("d")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(read_file(dir.file("d")),
            dir.file("libtiny.a") + ": " + dir.file("m.yaml") + " " + dir.file("w.bin") + "\n");
}

TEST_F(CommandLine, CheckComparesWithTheReference) {
  CommandResult r = run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " --check"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("output y: max abs error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
}

// Elements NaN on both sides pass and compare nothing: the check says how many, and that
// the check of an output NaN throughout was vacuous.
TEST_F(CommandLine, CheckSaysWhatNanElementsLeftUncompared) {
  write_file(dir.file("nan.yaml"), R"(tlmc: 1
name: nan
inputs:
  x: {shape: [2, 8]}
weights:
  two: {shape: [1], data: [2]}
nodes:
  - {op: Log, inputs: [x], outputs: [some]}
  - {op: Sub, inputs: [x, two], outputs: [negative]}
  - {op: Log, inputs: [negative], outputs: [all]}
outputs: [some, all]
)");
  CommandResult r = run_command(tlmc("-O0 " + dir.file("nan.yaml") + " --check"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("elements of some are NaN in both, and compare nothing\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("16 of 16 elements of all are NaN in both, and compare nothing: this "
                       "check of it is vacuous"),
            std::string::npos)
      << r.out;
}

TEST_F(CommandLine, DumpsEveryIrLevel) {
  CommandResult r = run_command(
      tlmc("-O0 " + dir.file("tiny.yaml") + " --dump=graph,te,loops -o " + dir.file("libtiny.a")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("graph tiny (opset 17)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("h: float32[2, 4] = MatMul(x, w)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# kernel 0 (workload "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kernel tiny_k0("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nvectorize "), std::string::npos)
      << "the schedule decisions are printed: " << r.out;
}

// --dump te-text is for tools outside tlmc: each kernel's program as the versioned text that
// reads back to the same program, under the key it is named by.
TEST_F(CommandLine, DumpsProgramTextThatReadsBackToItsKey) {
  const CommandResult r = run_command(
      tlmc("-O0 " + dir.file("tiny.yaml") + " --dump=te-text --emit=source -o " + dir.file("out")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string head = "# kernel 0 (workload ";
  ASSERT_EQ(r.out.rfind(head, 0), 0u) << r.out;
  const std::string key = r.out.substr(head.size(), 16);
  const size_t text = r.out.find('\n') + 1;
  const ir::TeProgram p = ir::te_from_text(r.out.substr(text));
  EXPECT_EQ(ir::workload_key(p), key) << r.out;
  EXPECT_EQ(ir::te_to_text(p), r.out.substr(text)) << r.out;

  const CommandResult bad = run_command(tlmc(dir.file("tiny.yaml") + " --dump=tetext 2>&1"));
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--dump takes graph, te, te-text, sketch, loops, precision or "
                         "resources, not 'tetext'"),
            std::string::npos)
      << bad.out;
}

}  // namespace
}  // namespace tlmc::test
