// Every bad-input rule of the graph format, through the real command: the diagnostic
// names the file, line and column, the exit status is 1, and nothing is written.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace tlmc::test {
namespace {

struct BadModel {
  const char* rule;
  const char* yaml;
  const char* position;  // "line:col" of the offending YAML node
  const char* message;   // a part of the message
};

void PrintTo(const BadModel& b, std::ostream* os) { *os << b.rule; }

class BadInput : public ::testing::TestWithParam<BadModel> {};

TEST_P(BadInput, ExitsOneWithPositionAndWritesNothing) {
  const BadModel& b = GetParam();
  TempDir dir;
  write_file(dir.file("m.yaml"), b.yaml);
  write_file(dir.file("short.bin"), "0123");
  CommandResult r = run_command(std::string(TLMC_EXE) + " -O0 " + dir.file("m.yaml") + " -o " +
                                dir.file("out/libm.a"));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out.rfind(dir.file("m.yaml") + ":" + b.position + ": error: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find(b.message), std::string::npos) << r.out;
  EXPECT_EQ(count_entries(dir.file("out")), 0) << "no output, no staging folder";
}

#define HEAD "tlmc: 1\nname: m\ninputs:\n  x: {shape: [2, 3]}\n"

INSTANTIATE_TEST_SUITE_P(
    Rules, BadInput,
    ::testing::Values(
        BadModel{"malformed YAML", HEAD "nodes: [\noutputs: [x]\n", "7:1", "malformed YAML"},
        BadModel{"unknown key", HEAD "nodez: []\noutputs: [x]\n", "5:1", "unknown key 'nodez'"},
        BadModel{"missing required key", "tlmc: 1\nname: m\nnodes: []\n", "1:1",
                 "is missing the key 'outputs'"},
        BadModel{"unknown operator",
                 HEAD "nodes:\n  - {op: Frobnicate, inputs: [x], outputs: [y]}\noutputs: [y]\n",
                 "6:5", "unknown operator 'Frobnicate' (supported: Abs, Add, "},
        BadModel{"wrong attribute type",
                 HEAD "nodes:\n  - {op: Softmax, inputs: [x], outputs: [y], attrs: {axis: "
                      "last}}\noutputs: [y]\n",
                 "6:54", "attribute 'axis' of Softmax must be an integer"},
        BadModel{"shape that does not fit",
                 HEAD "nodes:\n  - {op: MatMul, inputs: [x, x], outputs: [y]}\noutputs: [y]\n",
                 "6:5", "MatMul"},
        BadModel{"undefined tensor",
                 HEAD "nodes:\n  - {op: Relu, inputs: [z], outputs: [y]}\noutputs: [y]\n", "6:25",
                 "tensor 'z' is not defined"},
        BadModel{"twice-defined tensor",
                 HEAD "nodes:\n  - {op: Relu, inputs: [x], outputs: [x]}\noutputs: [x]\n", "6:39",
                 "tensor 'x' is already defined"},
        BadModel{"cycle",
                 HEAD "nodes:\n  - {op: Relu, inputs: [b], outputs: [a]}\n  - {op: Relu, inputs: "
                      "[a], outputs: [b]}\n"
                      "outputs: [a]\n",
                 "6:5", "is on a cycle"},
        BadModel{"missing weight file",
                 HEAD "weights:\n  w: {shape: [3], file: none.bin}\nnodes:\n  - {op: Add, inputs: "
                      "[x, w], outputs: [y]}\n"
                      "outputs: [y]\n",
                 "6:25", "its file names 'none.bin', which does not exist"},
        BadModel{"weight file too short",
                 HEAD "weights:\n  w: {shape: [3], file: short.bin}\nnodes:\n  - {op: Add, inputs: "
                      "[x, w], outputs: "
                      "[y]}\noutputs: [y]\n",
                 "6:25", "is too short"},
        BadModel{"unsupported dtype for an operator",
                 "tlmc: 1\nname: m\ninputs:\n  i: {shape: [3], dtype: int64}\nnodes:\n  - {op: "
                 "Relu, inputs: [i], "
                 "outputs: [y]}\noutputs: [y]\n",
                 "6:5", "does not support input dtype int64"}));

}  // namespace
}  // namespace tlmc::test
