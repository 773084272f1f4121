// Each decision validates itself against the state it applies to; an invalid one is an
// InvalidDecision and leaves the state as it was.
#include <gtest/gtest.h>

#include "scheduler/decision.h"
#include "scheduler/schedule_support.h"

namespace tlmc::scheduler {
namespace {

using test::error_of;
using test::matmul_yaml;
using test::program_of;

std::string str(const ir::Expr& e) {
  return ir::expr_str(e, [](int b) { return std::to_string(b); });
}

// y = relu(x): one stage with no reduction.
const char* const kRelu = R"(
tlmc: 1
name: r
inputs:
  x: {shape: [3, 50]}
nodes:
  - {op: Relu, inputs: [x], outputs: [y]}
outputs: [y]
)";

TEST(Decisions, OnlyAStageWithoutAReductionSplitsWithARemainder) {
  ScheduleState st(program_of(matmul_yaml(12, 7, 10)));
  EXPECT_EQ(error_of(st, {DecisionKind::Split, 0, -1, {0, 5}}),
            "split 0 [0, 5]: factors do not divide the extent 12 of a loop of a reduction");
  EXPECT_EQ(error_of(st, {DecisionKind::Split, 0, -1, {0, 0}}),
            "split 0 [0, 0]: factors must be positive");
  EXPECT_EQ(st.stages[0].leaves.size(), 3u) << "a refused split changes nothing";
  EXPECT_EQ(error_of(st, {DecisionKind::Split, 0, -1, {0, 2, 3}}), "");
  ASSERT_EQ(st.stages[0].leaves.size(), 5u);
  EXPECT_EQ(st.leaf(0, 0).extent, 2);
  EXPECT_EQ(st.leaf(0, 1).extent, 2);
  EXPECT_EQ(st.leaf(0, 2).extent, 3);

  // y = relu(x), x [3, 50]: 50 in tiles of 16 is 4 tiles, the last one starting at 34.
  ScheduleState ew(program_of(kRelu));
  EXPECT_EQ(error_of(ew, {DecisionKind::Split, 0, -1, {1, 64}}),
            "split 0 [1, 64]: factors exceed the extent 50");
  ASSERT_EQ(error_of(ew, {DecisionKind::Split, 0, -1, {1, 16}}), "");
  EXPECT_EQ(ew.leaf(0, 1).extent, 4);
  EXPECT_EQ(ew.leaf(0, 2).extent, 16);
  EXPECT_EQ(str(iter_value(ew.stages[0], 1)), "(min((s0_i1.0 * 16), 34) + s0_i1.1)");
  // Split again, inside and outside: the inner split divides, the outer one shifts too.
  ASSERT_EQ(error_of(ew, {DecisionKind::Split, 0, -1, {2, 4}}), "");
  ASSERT_EQ(error_of(ew, {DecisionKind::Split, 0, -1, {1, 3}}), "");
  EXPECT_EQ(str(iter_value(ew.stages[0], 1)),
            "(min(((min((s0_i1.0.0 * 3), 1) + s0_i1.0.1) * 16), 34) + "
            "((s0_i1.1.0 * 4) + s0_i1.1.1))");
}

TEST(Decisions, ReorderFuseAndAnnotationsAreChecked) {
  ScheduleState st(program_of(matmul_yaml(8, 4, 16)));
  EXPECT_EQ(error_of(st, {DecisionKind::Reorder, 0, -1, {0, 0, 1}}),
            "reorder 0 [0, 0, 1]: the order must list every loop once");
  EXPECT_EQ(error_of(st, {DecisionKind::Fuse, 0, -1, {1, 2}}),
            "fuse 0 [1, 2]: cannot fuse a spatial loop with a reduction loop");
  EXPECT_EQ(error_of(st, {DecisionKind::Vectorize, 0, -1, {1}}),
            "vectorize 0 [1]: only the innermost loop can be vectorized");
  EXPECT_EQ(error_of(st, {DecisionKind::Vectorize, 0, -1, {2}}),
            "vectorize 0 [2]: a reduction loop cannot be vectorized");
  EXPECT_EQ(error_of(st, {DecisionKind::Parallel, 0, -1, {2}}),
            "parallel 0 [2]: a reduction loop cannot run in parallel");
  EXPECT_EQ(error_of(st, {DecisionKind::Parallel, 0, -1, {0}}), "");
  EXPECT_EQ(error_of(st, {DecisionKind::Parallel, 0, -1, {1}}),
            "parallel 0 [1]: the stage already has a parallel loop");
  EXPECT_EQ(error_of(st, {DecisionKind::Split, 0, -1, {0, 2}}),
            "split 0 [0, 2]: cannot split an annotated loop");
  EXPECT_EQ(error_of(st, {DecisionKind::Split, 7, -1, {0, 2}}), "split 7 [0, 2]: no such stage");
}

TEST(Decisions, ComputeAtNeedsAConsumerAndAnAffineRegion) {
  ScheduleState st(program_of(matmul_yaml(8, 4, 16)));
  ASSERT_EQ(error_of(st, {DecisionKind::CacheWrite, 0, -1, {}}), "");
  ASSERT_EQ(st.te.stages.size(), 2u);
  EXPECT_EQ(st.te.stages[0].name, "c.local");
  EXPECT_EQ(error_of(st, {DecisionKind::ComputeAt, 1, 0, {0}}),
            "compute_at 1 0 [0]: an output of the subgraph must be computed at the root");
  ASSERT_EQ(error_of(st, {DecisionKind::Split, 1, -1, {1, 4}}), "");
  ASSERT_EQ(error_of(st, {DecisionKind::ComputeAt, 0, 1, {1}}), "");
  // The local tile: one row, the 4 columns of the inner loop, and the whole reduction.
  EXPECT_EQ(st.stages[0].iters[0].extent, 1);
  EXPECT_EQ(st.stages[0].iters[1].extent, 4);
  EXPECT_EQ(st.stages[0].iters[2].extent, 4);
  EXPECT_EQ(error_of(st, {DecisionKind::Split, 1, -1, {0, 2}}),
            "split 1 [0, 2]: another stage is computed inside this stage's loops");
}

TEST(Decisions, TextFormRoundTrips) {
  const std::vector<Decision> s = {{DecisionKind::Inline, 1, -1, {}},
                                   {DecisionKind::CacheWrite, 2, -1, {}},
                                   {DecisionKind::Split, 3, -1, {1, 8, 16}},
                                   {DecisionKind::ComputeAt, 2, 3, {0}},
                                   {DecisionKind::Unroll, 2, -1, {4}}};
  const std::string text = schedule_str(s);
  EXPECT_EQ(
      text,
      "inline 1 []\ncache_write 2 []\nsplit 3 [1, 8, 16]\ncompute_at 2 3 [0]\nunroll 2 [4]\n");
  std::optional<std::vector<Decision>> back = parse_schedule(text);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, s);
  EXPECT_FALSE(parse_schedule("split x [1]\n").has_value());
  EXPECT_FALSE(parse_schedule("tile 0 [1]\n").has_value());
}

}  // namespace
}  // namespace tlmc::scheduler
