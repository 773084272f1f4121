// The evolutionary search on a real convolution, measured for real: its first round starts
// from the sketch's default point, every point it proposes is new and made only of values
// the spaces list (so it applies, and measures correct), and once enough measurements have
// arrived the cost model trains and guides the next rounds.
#include <gtest/gtest.h>

#include <set>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "scheduler/partition.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"
#include "tune/search_strategy.h"

namespace tlmc::tune {
namespace {

MeasureTask conv_task() {
  const ir::Graph g = frontend::read_yaml_text(R"(
tlmc: 1
name: conv
inputs:
  x: {shape: [1, 6, 11, 13]}
weights:
  w: {shape: [8, 6, 3, 3], init: {uniform: [-1, 1]}, seed: 4}
  b: {shape: [8], init: {uniform: [-1, 1]}, seed: 5}
nodes:
  - op: Conv
    inputs: [x, w, b]
    outputs: [c]
    attrs: {kernel_shape: [3, 3], strides: [2, 1], pads: [1, 1, 1, 1]}
  - {op: Relu, inputs: [c], outputs: [y]}
outputs: [y]
)",
                                               "conv.yaml");
  const scheduler::Partition p = scheduler::partition_graph(g);
  return make_measure_task(g, p.subgraphs.at(0), ir::lower_subgraph(g, p.subgraphs.at(0)), 2);
}

TEST(EvolutionarySearch, ProposesNewPointsInsideTheSpaces) {
  const MeasureTask task = conv_task();
  const ir::Target target = ir::host_target();
  const scheduler::Sketches sketches = scheduler::generate_sketches(task.program, target);
  MeasureOptions quick;
  quick.min_seconds = 0.0005;
  quick.repeats = 3;
  Measurer measurer(task, target, quick);
  CostModel model;
  std::unique_ptr<SearchStrategy> search =
      make_evolutionary_search(sketches, target, model, 0, EvolutionOptions{}, 3);
  EXPECT_EQ(search->name(), "evolutionary");

  std::set<scheduler::SpacePoint> seen;
  for (int round = 0; round < 4; ++round) {
    const std::vector<scheduler::SpacePoint> batch = search->propose(8);
    ASSERT_EQ(batch.size(), 8u);
    if (round == 0) {
      EXPECT_EQ(batch[0].values, scheduler::default_values(sketches[0]));
    }
    std::vector<std::vector<scheduler::Decision>> schedules;
    for (const scheduler::SpacePoint& point : batch) {
      EXPECT_TRUE(seen.insert(point).second) << "proposed twice";
      ASSERT_LT(point.sketch, sketches.size());
      ASSERT_NO_THROW(schedules.push_back(sketches[point.sketch].decisions(point.values)));
    }
    const std::vector<MeasureResult> results = measurer.measure_batch(schedules, 2);
    for (size_t i = 0; i < batch.size(); ++i) {
      // Every point measures, except one whose unrolled C is too long to compile (a
      // refusal the measurer makes by design).
      const bool refused = results[i].status == scheduler::MeasureStatus::CompileError &&
                           results[i].reason.find("not compiled") != std::string::npos;
      EXPECT_TRUE(results[i].status == scheduler::MeasureStatus::Ok || refused)
          << results[i].reason << "\n"
          << scheduler::space_schedule_text(sketches, batch[i]);
      search->observe(batch[i], results[i]);
    }
    EXPECT_EQ(model.samples(), seen.size());
  }
  EXPECT_TRUE(model.ready()) << "trained once 16 measurements had arrived";
}

}  // namespace
}  // namespace tlmc::tune
