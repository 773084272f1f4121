// The parallel space chooses which outer tile loop leads the fused parallel loop, so that the
// threads split that axis (a layer's output channels: each reads its share of the weights).
// Only values that change the order are listed.
#include <gtest/gtest.h>

#include "ir/target.h"
#include "scheduler/schedule_support.h"
#include "scheduler/sketch_rules.h"

namespace tlmc::scheduler {
namespace {

using test::matmul_yaml;
using test::program_of;

// A fixed target: the test does not depend on the machine it runs on.
ir::Target avx512() {
  ir::Target t = *ir::parse_target("x86-64-avx512");
  t.cores = 2;
  return t;
}

// Walks the first sketch of an [m, k] x [k, n] product: every tile space of `whole_axis`
// takes its smallest value (its outer loop keeps the whole extent), every other space its
// default, up to the parallel space; returns that space's valid values and, after choosing
// `parallel`, the name of the stage's first loop.
struct ParallelStep {
  std::vector<int64_t> valid;
  std::string first_loop;
};

ParallelStep walk(int m, int k, int n, const std::string& whole_axis, int64_t parallel) {
  const Sketches sketches = generate_sketches(program_of(matmul_yaml(m, k, n)), avx512());
  SketchCursor c(sketches.at(0));
  while (!c.done() && c.space().kind != SpaceKind::Parallel) {
    const Space& s = c.space();
    const bool whole = s.kind == SpaceKind::Tile && s.axis.rfind(whole_axis + ".", 0) == 0;
    c.choose(whole ? c.valid_values().front() : c.default_value());
  }
  EXPECT_FALSE(c.done()) << "no parallel space";
  if (c.done()) return {};
  ParallelStep out{c.valid_values(), ""};
  const int stage = static_cast<int>(c.run().state.stages.size()) - 1;
  c.choose(parallel);
  out.first_loop = c.run().state.leaf(stage, 0).name;
  return out;
}

TEST(ParallelSpace, ListsALeaderOnlyWhereTheOrderChanges) {
  // i keeps all 64 rows outside, j is tiled by default: both outer loops iterate.
  ParallelStep both = walk(64, 32, 256, "i", 1);
  EXPECT_EQ(both.valid, (std::vector<int64_t>{0, 1, 2}));
  // A product of one row: the outer i loop runs once, so leading with j changes nothing.
  ParallelStep one_row = walk(1, 32, 256, "i", 1);
  EXPECT_EQ(one_row.valid, (std::vector<int64_t>{0, 1}));
}

TEST(ParallelSpace, TheChosenAxisLeadsTheFusedLoop) {
  const ParallelStep declared = walk(64, 32, 256, "i", 1);
  const ParallelStep j_first = walk(64, 32, 256, "i", 2);
  // Fused loops are named by their parts, outer first.
  EXPECT_LT(declared.first_loop.find("i.0"), declared.first_loop.find("j.0"))
      << declared.first_loop;
  EXPECT_LT(j_first.first_loop.find("j.0"), j_first.first_loop.find("i.0")) << j_first.first_loop;
}

TEST(ParallelSpace, TheDefaultKeepsTheDeclaredOrder) {
  const Sketches sketches = generate_sketches(program_of(matmul_yaml(64, 32, 256)), avx512());
  SketchCursor c(sketches.at(0));
  while (c.space().kind != SpaceKind::Parallel) c.choose(c.default_value());
  EXPECT_EQ(c.default_value(), 1);
}

}  // namespace
}  // namespace tlmc::scheduler
