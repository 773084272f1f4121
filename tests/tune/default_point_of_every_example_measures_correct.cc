// The sketch's default point (each space at the -O0 policy's value) of every distinct
// subgraph of the bundled examples applies and computes what the reference computes.
#include <gtest/gtest.h>

#include <map>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
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
    const ir::LoweredSubgraph lowered = ir::lower_subgraph(g, nodes);
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

INSTANTIATE_TEST_SUITE_P(Examples, DefaultPoint,
                         testing::Values("mlp.yaml", "resnet_block.yaml", "transformer_layer.yaml"),
                         [](const testing::TestParamInfo<std::string>& i) {
                           return i.param.substr(0, i.param.find('.'));
                         });

}  // namespace
}  // namespace tlmc::tune
