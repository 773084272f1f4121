// A program written as text reads back to the same program: its printed form, workload
// key and text are unchanged, for every subgraph of the examples and odd shapes, and for
// names with blanks and escapes. Damaged text is refused with its reason.
#include <gtest/gtest.h>

#include "ir/te_text.h"
#include "lm/lm_support.h"

namespace tlmc {
namespace {

TEST(TeText, EveryProgramReadsBackUnchanged) {
  const std::vector<ir::TeProgram> programs = test::varied_programs();
  ASSERT_GT(programs.size(), 10u);
  for (const ir::TeProgram& p : programs) {
    const std::string text = ir::te_to_text(p);
    const ir::TeProgram back = ir::te_from_text(text);
    EXPECT_EQ(ir::te_str(back), ir::te_str(p));
    EXPECT_EQ(ir::workload_key(back), ir::workload_key(p));
    EXPECT_EQ(ir::te_to_text(back), text);
    ASSERT_EQ(back.stages.size(), p.stages.size());
    for (size_t s = 0; s < p.stages.size(); ++s) {
      EXPECT_EQ(back.stages[s].op, p.stages[s].op);
      EXPECT_EQ(back.stages[s].name, p.stages[s].name);
    }
  }
}

TEST(TeText, NamesWithBlanksAndEscapesReadBack) {
  ir::TeProgram p = test::varied_programs().front();
  p.tensors[0].name = "a tensor/with %41 and\ttab";
  p.stages[0].name = "";
  const ir::TeProgram back = ir::te_from_text(ir::te_to_text(p));
  EXPECT_EQ(back.tensors[0].name, p.tensors[0].name);
  EXPECT_EQ(back.stages[0].name, "");
}

std::string error_of(const std::string& text) {
  try {
    ir::te_from_text(text);
  } catch (const ir::TeTextError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TeText, DamagedTextIsRefusedWithItsReason) {
  const std::string text = ir::te_to_text(test::varied_programs().front());
  EXPECT_EQ(error_of("tlmc-te 2\n"), "program text, word 2: version 2 (this tlmc reads version 1)");
  EXPECT_EQ(error_of("hello"), "program text, word 1: not a tlmc program text");
  EXPECT_NE(error_of(text.substr(0, text.size() / 2)).find("the text ends early"),
            std::string::npos);
  EXPECT_NE(error_of(text + "x").find("text follows the end of the program"), std::string::npos);
  // A load given one index too few.
  std::string wrong = text;
  const size_t load = wrong.find(" l ");
  ASSERT_NE(load, std::string::npos);
  const size_t count = wrong.find(' ', wrong.find(' ', load + 3) + 1) + 1;
  wrong[count] = static_cast<char>(wrong[count] - 1);
  EXPECT_NE(error_of(wrong).find("indices"), std::string::npos) << error_of(wrong);
  // A stage whose tensor claims another stage.
  std::string swapped = text;
  const size_t stage = swapped.find("stage ", swapped.find("stages") + 8);
  ASSERT_NE(stage, std::string::npos);
  const size_t out = swapped.find(' ', stage + 6) + 1;
  swapped[out] = '0';
  EXPECT_NE(error_of(swapped).find("inconsistent program"), std::string::npos) << error_of(swapped);
  // Two loops of a stage under one name (found by fuzzing tuning records: the scheduler
  // named both spaces alike and a schedule of them failed an assertion).
  const std::string twice = R"(tlmc-te 1
vars 3 tensors 2 stages 1
tensor a float32 2 8 16 -1 0
tensor b float32 2 8 16 0 0
stage b 1 relu none 2 0 i 8 1 i 16 0
  b max l float32 0 2 v 0 i v 1 i f float32 0x0p+0
inputs 1 0
outputs 1 1
end
)";
  EXPECT_EQ(error_of(twice),
            "program text, word 37: stage b has two loops named i or of variable 1")
      << error_of(twice);
}

// Shapes and loops within a model's limits (found by fuzzing: an axis of 1.6e18 overflowed
// the element count, undefined behaviour).
TEST(TeText, SizesPastTheLimitsAreRefused) {
  const std::string text = R"(tlmc-te 1
vars 1 tensors 1 stages 0
tensor a float32 2 AXIS 1024 -1 0
inputs 1 0
outputs 0
end
)";
  auto with_axis = [&](const std::string& axis) {
    std::string t = text;
    t.replace(t.find("AXIS"), 4, axis);
    return error_of(t);
  };
  EXPECT_EQ(with_axis("2"), "no error");
  EXPECT_NE(with_axis("1644444444444444444").find("1644444444444444444 is out of range"),
            std::string::npos)
      << with_axis("1644444444444444444");
  EXPECT_NE(with_axis("2147483647").find("tensor a: "), std::string::npos)
      << with_axis("2147483647");
}

// An expression nested a million deep is refused at 2000 levels, before the reader's
// recursion could exhaust the stack.
TEST(TeText, DeeplyNestedExpressionsAreRefused) {
  std::string text = ir::te_to_text(test::varied_programs().front());
  const size_t body = text.find(" l ");
  ASSERT_NE(body, std::string::npos) << text;
  // Each "u neg" (a negation) nests what follows one level deeper.
  std::string deep;
  for (int i = 0; i < 1000000; ++i) deep += "u neg ";
  text.insert(body + 1, deep);
  const std::string error = error_of(text);
  EXPECT_NE(error.find("expressions nest too deeply"), std::string::npos) << error.substr(0, 200);
}

}  // namespace
}  // namespace tlmc
