// A decision the validator accepts must give a schedule that lowers to a correct loop nest:
// regression tests for decisions that used to pass validation and then broke lowering
// (an internal error) or silently changed the program (a scalar loop for a vector one).
#include <gtest/gtest.h>

#include "scheduler/decision.h"
#include "scheduler/lower_schedule.h"
#include "scheduler/schedule_support.h"

namespace tlmc::scheduler {
namespace {

using test::error_of;
using test::program_of;

const char* const kSoftmax = R"(
tlmc: 1
name: sm
inputs:
  x: {shape: [8, 16]}
nodes:
  - {op: Softmax, inputs: [x], outputs: [y]}
outputs: [y]
)";

// Softmax: stage 0 the row max, stage 1 exp(x - max) (reading the max), stage 2 the row
// sum, stage 3 the output. All three are computed per tile of 4 rows; the exponentials are a
// reader of the max attached beside it, so fusing their loops would make the max's region
// non-affine.
TEST(AcceptedDecisions, FusingAReaderBesideAnAttachedProducerIsRefused) {
  ScheduleState st(program_of(kSoftmax));
  ASSERT_EQ(error_of(st, {DecisionKind::Split, 3, -1, {0, 4}}), "");
  ASSERT_EQ(error_of(st, {DecisionKind::ComputeAt, 2, 3, {0}}), "");
  ASSERT_EQ(error_of(st, {DecisionKind::ComputeAt, 1, 3, {0}}), "");
  ASSERT_EQ(error_of(st, {DecisionKind::ComputeAt, 0, 3, {0}}), "");
  ASSERT_EQ(error_of(st, {DecisionKind::Split, 1, -1, {0, 2}}), "");
  EXPECT_EQ(error_of(st, {DecisionKind::Fuse, 1, -1, {0, 2}}),
            "fuse 1 [0, 2]: stage 0 is computed beside this stage, whose loops would no longer "
            "give it an affine region");
  // What was accepted lowers.
  EXPECT_NO_THROW(lower_schedule(st, "k"));
}

TEST(AcceptedDecisions, AVectorizedLoopStaysInnermost) {
  ScheduleState st(program_of(kSoftmax));
  ASSERT_EQ(error_of(st, {DecisionKind::Vectorize, 3, -1, {1}}), "");
  EXPECT_EQ(error_of(st, {DecisionKind::Reorder, 3, -1, {1, 0}}),
            "reorder 3 [1, 0]: a vectorized loop must stay innermost");
  EXPECT_EQ(st.leaf(3, 1).kind, ir::LoopKind::Vectorized);
  EXPECT_NO_THROW(lower_schedule(st, "k"));
}

}  // namespace
}  // namespace tlmc::scheduler
