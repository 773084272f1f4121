// The sketch's default point (each space at the -O0 policy's value) of every distinct
// subgraph of the bundled examples, lowered as the driver lowers it (merged spatial rows
// included), applies and computes what the reference computes.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "scheduler/lowering_choices.h"
#include "scheduler/partition.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"
#include "tune/measurer.h"

namespace tlmc::tune {
namespace {

class DefaultPoint : public testing::TestWithParam<std::string> {};

TEST_P(DefaultPoint, MeasuresCorrect) {
  const ir::Graph g =
      frontend::read_yaml_model(std::string(TLMC_SOURCE_DIR) + "/examples/" + GetParam());
  const scheduler::Partition p = scheduler::partition_graph(g);
  const ir::Target target = ir::host_target();
  MeasureOptions quick;
  quick.min_seconds = 0.0002;
  quick.repeats = 1;
  std::map<std::string, bool> done;
  for (const std::vector<int>& nodes : p.subgraphs) {
    const ir::LoweredSubgraph lowered =
        ir::lower_subgraph(g, nodes, scheduler::lowering_choices(g, nodes, target));
    if (!done.emplace(ir::workload_key(lowered.program), true).second) continue;
    const MeasureTask task = make_measure_task(g, nodes, lowered, 1);
    const scheduler::Sketch sketch = scheduler::generate_sketch(task.program, target);
    Measurer measurer(task, target, quick);
    const MeasureResult r = measurer.measure(sketch.decisions(scheduler::default_values(sketch)));
    EXPECT_EQ(r.status, scheduler::MeasureStatus::Ok)
        << r.reason << "\n"
        << scheduler::space_schedule_text(sketch, scheduler::default_values(sketch));
  }
}

// A pointwise convolution with a residual epilogue is lowered over one merged spatial row;
// points drawn from every sketch of that program measure correct against its reference.
TEST(MergedSpatialRow, RandomPointsMeasureCorrect) {
  const ir::Graph g = frontend::read_yaml_text(R"(tlmc: 1
name: pointwise
inputs:
  x: {shape: [1, 24, 10, 14]}
  skip: {shape: [1, 40, 10, 14]}
weights:
  w: {shape: [40, 24, 1, 1], init: {uniform: [-0.5, 0.5]}}
  b: {shape: [40], init: {uniform: [-1, 1]}}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [c]}
  - {op: Add, inputs: [c, skip], outputs: [r]}
  - {op: Relu, inputs: [r], outputs: [y]}
outputs: [y]
)",
                                               "pointwise.yaml");
  const scheduler::Partition p = scheduler::partition_graph(g);
  ASSERT_EQ(p.subgraphs.size(), 1u);
  const ir::Target target = ir::host_target();
  const ir::LoweringChoices choices = scheduler::lowering_choices(g, p.subgraphs[0], target);
  ASSERT_TRUE(choices.flat_spatial);
  const ir::LoweredSubgraph lowered = ir::lower_subgraph(g, p.subgraphs[0], choices);
  const MeasureTask task = make_measure_task(g, p.subgraphs[0], lowered, 1);
  const scheduler::Sketches sketches = scheduler::generate_sketches(task.program, target);
  MeasureOptions quick;
  quick.min_seconds = 0.0002;
  quick.repeats = 1;
  quick.max_source_bytes = size_t{1} << 20;  // check the large unrolls too
  Measurer measurer(task, target, quick);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 12; ++i) {
    const scheduler::SpacePoint point = scheduler::random_point(sketches, rng);
    const scheduler::Sketch& sketch = sketches[point.sketch];
    const MeasureResult r = measurer.measure(sketch.decisions(point.values));
    EXPECT_EQ(r.status, scheduler::MeasureStatus::Ok)
        << r.reason << "\n"
        << scheduler::space_schedule_text(sketches, point);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, DefaultPoint,
                         testing::Values("mlp.yaml", "resnet_block.yaml", "transformer_layer.yaml"),
                         [](const testing::TestParamInfo<std::string>& i) {
                           return i.param.substr(0, i.param.find('.'));
                         });

}  // namespace
}  // namespace tlmc::tune
