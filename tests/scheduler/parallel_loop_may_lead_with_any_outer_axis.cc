// The parallel space chooses which outer tile loop leads the fused parallel loop, so that the
// threads split that axis (a layer's output channels: each reads its share of the weights).
// Only values that change the order are listed.
#include <gtest/gtest.h>

#include <map>
#include <string>

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

// [b, m, k] x [b, k, n]: the outer loops are b0.0, i.0, j.0.
std::string batched_matmul_yaml(int b, int m, int k, int n) {
  const std::string bs = std::to_string(b);
  return "tlmc: 1\nname: bmm\ninputs:\n  a: {shape: [" + bs + ", " + std::to_string(m) + ", " +
         std::to_string(k) + "]}\n  b: {shape: [" + bs + ", " + std::to_string(k) + ", " +
         std::to_string(n) +
         "]}\nnodes:\n  - {op: MatMul, inputs: [a, b], outputs: [c]}\noutputs: [c]\n";
}

// How the tile spaces of an axis are walked: smallest values leave its outer loop the whole
// extent, largest ones leave it as few iterations as the spaces allow.
enum class Tiles { Default, Smallest, Largest };

struct ParallelStep {
  std::vector<int64_t> valid;
  std::vector<int64_t> stand_ins;  // what points whose value was 0, 1, 2, 3 take here
  std::string first_loop;          // the stage's first loop once `parallel` is chosen
};

// Walks the first sketch of `yaml` up to its parallel space, tiling each axis named in
// `tiles` as it says and taking every other space's default.
ParallelStep walk(const std::string& yaml, const std::map<std::string, Tiles>& tiles,
                  int64_t parallel) {
  const Sketches sketches = generate_sketches(program_of(yaml), avx512());
  SketchCursor c(sketches.at(0));
  while (!c.done() && c.space().kind != SpaceKind::Parallel) {
    const Space& s = c.space();
    const auto how =
        s.kind == SpaceKind::Tile ? tiles.find(s.axis.substr(0, s.axis.find('.'))) : tiles.end();
    const Tiles t = how == tiles.end() ? Tiles::Default : how->second;
    c.choose(t == Tiles::Smallest  ? c.valid_values().front()
             : t == Tiles::Largest ? c.valid_values().back()
                                   : c.default_value());
  }
  EXPECT_FALSE(c.done()) << "no parallel space";
  if (c.done()) return {};
  ParallelStep out{c.valid_values(), {}, ""};
  for (int64_t v = 0; v < 4; ++v) out.stand_ins.push_back(c.stand_in(v));
  const int stage = static_cast<int>(c.run().state.stages.size()) - 1;
  c.choose(parallel);
  out.first_loop = c.run().state.leaf(stage, 0).name;
  return out;
}

TEST(ParallelSpace, ListsALeaderOnlyWhereTheOrderChanges) {
  const std::string mm = matmul_yaml(64, 32, 256);
  // Both outer loops iterate: j may lead.
  EXPECT_EQ(walk(mm, {{"i", Tiles::Smallest}, {"j", Tiles::Smallest}}, 1).valid,
            (std::vector<int64_t>{0, 1, 2}));
  // The outer j loop runs once: leading with it changes nothing.
  const ParallelStep j_once = walk(mm, {{"i", Tiles::Smallest}, {"j", Tiles::Largest}}, 1);
  EXPECT_EQ(j_once.valid, (std::vector<int64_t>{0, 1}));
  // A product of one row: the outer i loop runs once, j would lead anyway.
  EXPECT_EQ(walk(matmul_yaml(1, 32, 256), {{"j", Tiles::Smallest}}, 1).valid,
            (std::vector<int64_t>{0, 1}));
  // A point that led with j, mutated so that j no longer iterates, keeps the declared order.
  EXPECT_EQ(j_once.stand_ins, (std::vector<int64_t>{0, 1, 1, 1}));
  // Also where another leader is listed: the one nearest in value (i) would change the order.
  const ParallelStep bmm_j_once =
      walk(batched_matmul_yaml(2, 64, 32, 256),
           {{"b0", Tiles::Smallest}, {"i", Tiles::Smallest}, {"j", Tiles::Largest}}, 1);
  EXPECT_EQ(bmm_j_once.valid, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(bmm_j_once.stand_ins, (std::vector<int64_t>{0, 1, 2, 1}));
}

TEST(ParallelSpace, TheChosenAxisLeadsTheFusedLoopAndTheOthersKeepTheirOrder) {
  const std::map<std::string, Tiles> all = {
      {"b0", Tiles::Smallest}, {"i", Tiles::Smallest}, {"j", Tiles::Smallest}};
  const std::string bmm = batched_matmul_yaml(2, 64, 32, 256);
  ASSERT_EQ(walk(bmm, all, 1).valid, (std::vector<int64_t>{0, 1, 2, 3}));
  // Fused loops are named by their parts, outer first.
  auto order = [](const std::string& fused) {
    return std::vector<size_t>{fused.find("b0.0"), fused.find("i.0"), fused.find("j.0")};
  };
  const std::vector<size_t> declared = order(walk(bmm, all, 1).first_loop);
  EXPECT_TRUE(declared[0] < declared[1] && declared[1] < declared[2]);
  const std::vector<size_t> i_first = order(walk(bmm, all, 2).first_loop);
  EXPECT_TRUE(i_first[1] < i_first[0] && i_first[0] < i_first[2]);
  const std::vector<size_t> j_first = order(walk(bmm, all, 3).first_loop);
  EXPECT_TRUE(j_first[2] < j_first[0] && j_first[0] < j_first[1]) << "b0 stays before i";
}

TEST(ParallelSpace, TheDefaultKeepsTheDeclaredOrder) {
  const Sketches sketches = generate_sketches(program_of(matmul_yaml(64, 32, 256)), avx512());
  SketchCursor c(sketches.at(0));
  while (c.space().kind != SpaceKind::Parallel) c.choose(c.default_value());
  EXPECT_EQ(c.default_value(), 1);
}

// x [m, 64] times a weight w [64, n].
std::string weight_matmul_yaml(int m, int n) {
  return "tlmc: 1\nname: wmm\ninputs:\n  x: {shape: [" + std::to_string(m) +
         ", 64]}\nweights:\n  w: {shape: [64, " + std::to_string(n) +
         "], init: {uniform: [-1, 1]}}\nnodes:\n  - {op: MatMul, inputs: [x, w], outputs: "
         "[y]}\noutputs: [y]\n";
}

int64_t default_parallel(const std::string& yaml) {
  const Sketches sketches = generate_sketches(program_of(yaml), avx512());
  SketchCursor c(sketches.at(0));
  while (c.space().kind != SpaceKind::Parallel) c.choose(c.default_value());
  return c.default_value();
}

// A weight larger than the activations together leads (its columns, j.0 = outer loop 2):
// its panel stays in cache while the rows cycle under it. Smaller, the declared order stays.
TEST(ParallelSpace, TheDefaultLeadsWithAWeightThatOutweighsTheRest) {
  EXPECT_EQ(default_parallel(weight_matmul_yaml(128, 1013)), 2);
  EXPECT_EQ(default_parallel(weight_matmul_yaml(1024, 128)), 1);
}

}  // namespace
}  // namespace tlmc::scheduler
