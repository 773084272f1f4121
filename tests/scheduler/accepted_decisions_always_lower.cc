// A decision the validator accepts must give a schedule that lowers to a correct loop nest:
// regression tests for decisions that used to pass validation and then broke lowering
// (an internal error) or silently changed the program (a scalar loop for a vector one).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "scheduler/decision.h"
#include "scheduler/lower_schedule.h"
#include "scheduler/schedule_support.h"
#include "scheduler/sketch.h"

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

// Every region of a stage computed inside a loop, inferred again from scratch: still affine,
// and of the size and runs recorded when the stage was attached.
void expect_regions_as_recorded(const ScheduleState& st, const std::string& after) {
  for (size_t p = 0; p < st.stages.size(); ++p) {
    const StageState& ps = st.stages[p];
    if (ps.attach != Attach::At) continue;
    const Region r = infer_region(st, static_cast<int>(p), ps.at_stage, ps.at_iter);
    ASSERT_FALSE(r.min.empty()) << "stage " << p << " after " << after;
    for (size_t j = 0; j < r.extent.size(); ++j) {
      EXPECT_EQ(r.extent[j], ps.iters[j].extent) << "stage " << p << " after " << after;
      EXPECT_EQ(r.run[j], ps.region_run.at(j)) << "stage " << p << " after " << after;
    }
  }
}

// A decision drawn at random: of a kind that changes one stage's loops, on any stage, with
// loop positions and factors that may or may not fit.
Decision random_decision(const ScheduleState& st, std::mt19937_64& rng) {
  const auto pick = [&rng](int64_t n) {
    return std::uniform_int_distribution<int64_t>(0, std::max<int64_t>(n, 1) - 1)(rng);
  };
  // Half the time a stage some attached stage's region is read through: its consumer or a
  // stage attached beside it.
  std::vector<int> readers;
  for (const StageState& p : st.stages)
    if (p.attach == Attach::At)
      for (size_t q = 0; q < st.stages.size(); ++q)
        if (static_cast<int>(q) == p.at_stage ||
            (st.stages[q].attach == Attach::At && st.stages[q].at_stage == p.at_stage &&
             &st.stages[q] != &p))
          readers.push_back(static_cast<int>(q));
  Decision d{
      DecisionKind::Split, static_cast<int>(pick(static_cast<int64_t>(st.stages.size()))), -1, {}};
  if (!readers.empty() && pick(2) == 0)
    d.stage = readers[static_cast<size_t>(pick(static_cast<int64_t>(readers.size())))];
  const int64_t loops = static_cast<int64_t>(st.stages[static_cast<size_t>(d.stage)].leaves.size());
  switch (pick(6)) {
    case 0:  // (3 leaves a remainder on most extents)
      d.args = {pick(loops), std::array<int64_t, 4>{2, 3, 4, 8}[static_cast<size_t>(pick(4))]};
      break;
    case 1: {
      d.kind = DecisionKind::Reorder;
      d.args.resize(static_cast<size_t>(loops));
      std::iota(d.args.begin(), d.args.end(), 0);
      std::shuffle(d.args.begin(), d.args.end(), rng);
      break;
    }
    case 2:
      d.kind = DecisionKind::Fuse;
      d.args = {pick(loops), 2 + pick(2)};
      break;
    case 3:
      d.kind = std::array<DecisionKind, 3>{DecisionKind::Parallel, DecisionKind::Vectorize,
                                           DecisionKind::Unroll}[static_cast<size_t>(pick(3))];
      d.args = {pick(loops)};
      break;
    case 4:
      d.kind = DecisionKind::Bind;
      d.args = {pick(loops), pick(2)};
      break;
    default:
      d.kind = DecisionKind::ThreadReduce;
      d.args = {pick(loops), 32};
      break;
  }
  return d;
}

// apply_decision infers again only the regions a decision can change (those read through
// the stage it changes). Whatever it skipped is unchanged: after every decision it accepts,
// on top of random points of the sketches, every region is still as recorded.
TEST(AcceptedDecisions, EveryAttachedRegionStaysAsRecorded) {
  const std::vector<std::string> models = {kSoftmax, test::matmul_yaml(24, 40, 20),
                                           R"(
tlmc: 1
name: ln
inputs:
  x: {shape: [6, 24]}
  g: {shape: [24]}
  b: {shape: [24]}
nodes:
  - {op: LayerNormalization, inputs: [x, g, b], outputs: [y], attrs: {axis: -1}}
outputs: [y]
)",
                                           R"(
tlmc: 1
name: conv
inputs:
  x: {shape: [1, 8, 10, 10]}
  w: {shape: [16, 8, 3, 3]}
  b: {shape: [16]}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [y], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [y], outputs: [z]}
outputs: [z]
)"};
  size_t accepted = 0, attached = 0;
  for (const std::string& yaml : models) {
    const ir::TeProgram program = program_of(yaml);
    for (const char* target : {"x86-64-avx512", "cuda-sm80"}) {
      for (uint64_t seed = 0; seed < 12; ++seed) {
        std::mt19937_64 rng(seed);
        const std::vector<Decision> point =
            random_schedule(program, *ir::parse_target(target), seed);
        // A prefix of the point (its attachments are made early), then random decisions.
        const size_t prefix = std::uniform_int_distribution<size_t>(0, point.size())(rng);
        ScheduleState st(program);
        std::string applied = std::string(target) + ", seed " + std::to_string(seed) + ":\n";
        for (size_t i = 0; i < prefix; ++i) {
          apply_decision(st, point[i]);
          applied += decision_str(point[i]) + "\n";
        }
        for (int k = 0; k < 300; ++k) {
          const Decision d = random_decision(st, rng);
          try {  // (an internal error, where the validator should have refused)
            if (!error_of(st, d).empty()) continue;
            applied += decision_str(d) + "\n";
            ++accepted;
            for (const StageState& s : st.stages) attached += s.attach == Attach::At;
            expect_regions_as_recorded(st, applied);
          } catch (const std::exception& e) {
            ADD_FAILURE() << e.what() << "\nafter:\n" << applied << decision_str(d);
          }
          if (HasFailure()) return;
        }
        EXPECT_NO_THROW(lower_schedule(st, "k")) << applied;
        if (HasFailure()) return;
      }
    }
  }
  // Decisions were accepted, many beside attached stages.
  EXPECT_GT(accepted, 500u);
  EXPECT_GT(attached, 500u);
}

}  // namespace
}  // namespace tlmc::scheduler
