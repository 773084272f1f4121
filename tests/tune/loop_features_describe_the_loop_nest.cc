// The cost model's features read the lowered loop nest: a vectorised, parallel schedule and a
// scalar, serial one of the same matrix product differ where they should (vector and
// parallel extents) and agree where they should (the work); the vector is as long as its
// names, which are unique, and the same program always gives the same vector.
#include <gtest/gtest.h>

#include <set>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "scheduler/lower_schedule.h"
#include "scheduler/partition.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"
#include "tune/loop_features.h"

namespace tlmc::tune {
namespace {

ir::TeProgram matmul() {
  const ir::Graph g = frontend::read_yaml_text(R"(
tlmc: 1
name: mm
inputs:
  a: {shape: [64, 48]}
  b: {shape: [48, 96]}
nodes:
  - {op: MatMul, inputs: [a, b], outputs: [c]}
outputs: [c]
)",
                                               "mm.yaml");
  const scheduler::Partition p = scheduler::partition_graph(g);
  return ir::lower_subgraph(g, p.subgraphs.at(0)).program;
}

// The sketch's default point, with the vectorize and parallel spaces set to `annotate`.
ir::LoopProgram lowered(const scheduler::Sketch& sketch, int64_t annotate) {
  scheduler::SketchCursor c(sketch);
  while (!c.done()) {
    const scheduler::SpaceKind k = c.space().kind;
    const bool annotation =
        k == scheduler::SpaceKind::Vectorize || k == scheduler::SpaceKind::Parallel;
    const std::vector<int64_t>& valid = c.valid_values();
    const bool listed = std::find(valid.begin(), valid.end(), annotate) != valid.end();
    c.choose(annotation && listed ? annotate : c.default_value());
  }
  return scheduler::lower_schedule(c.run().state, "k");
}

float feature(const std::vector<float>& f, const std::string& name) {
  const std::vector<std::string>& names = loop_feature_names();
  const auto it = std::find(names.begin(), names.end(), name);
  EXPECT_NE(it, names.end()) << name;
  return it == names.end() ? -1 : f[static_cast<size_t>(it - names.begin())];
}

TEST(LoopFeatures, SeeVectorsParallelismAndWork) {
  const std::vector<std::string>& names = loop_feature_names();
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());

  ir::Target target = ir::host_target();
  target.cores = 2;
  const scheduler::Sketch sketch = scheduler::generate_sketch(matmul(), target);
  const std::vector<float> fast = loop_features(lowered(sketch, 1), target);
  const std::vector<float> slow = loop_features(lowered(sketch, 0), target);
  ASSERT_EQ(fast.size(), names.size());
  ASSERT_EQ(slow.size(), names.size());
  EXPECT_EQ(loop_features(lowered(sketch, 1), target), fast) << "deterministic";

  // The heaviest statement is the multiply-add: vectorised in one, not in the other.
  EXPECT_GT(feature(fast, "s0.vector_extent"), 0);
  EXPECT_EQ(feature(slow, "s0.vector_extent"), 0);
  EXPECT_GT(feature(fast, "s0.parallel_extent"), 0);
  EXPECT_EQ(feature(slow, "s0.parallel_extent"), 0);
  EXPECT_EQ(feature(fast, "program.parallel_loops"), 1);
  EXPECT_EQ(feature(slow, "program.parallel_loops"), 0);
  EXPECT_EQ(feature(fast, "s0.accumulates"), 1);
  // The same work either way: 64 * 96 * 48 multiply-adds, two operations each.
  EXPECT_FLOAT_EQ(feature(fast, "s0.flops"), feature(slow, "s0.flops"));
  EXPECT_NEAR(feature(fast, "s0.flops"), std::log2(1 + 2.0 * 64 * 96 * 48), 1e-3);
  // Its store is contiguous along the vector loop.
  EXPECT_EQ(feature(fast, "s0.a0.store"), 1);
  EXPECT_EQ(feature(fast, "s0.a0.vector_contiguous"), 1);
}

}  // namespace
}  // namespace tlmc::tune
