// Reductions with too little spatial parallelism for the cores and lanes get a second
// sketch, factored into partial reductions (rfactor); its default point and random points
// measure correct, the search draws from both sketches, and the rfactor decision itself
// refuses a factor that does not divide the axis. A reduction with rows enough gets one.
#include <gtest/gtest.h>

#include <random>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "scheduler/decision.h"
#include "scheduler/partition.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"
#include "tune/measurer.h"

namespace tlmc::tune {
namespace {

// `op` over the last axis of x (over all of it for ReduceSum, whose axes are an input).
MeasureTask reduce_task(const std::string& shape, const std::string& op) {
  const std::string attrs = op == "ReduceSum" ? "{keepdims: 0}"
                            : op == "Softmax" ? "{axis: -1}"
                                              : "{axes: [-1], keepdims: 0}";
  const ir::Graph g = frontend::read_yaml_text(
      "tlmc: 1\nname: r\ninputs:\n  x: {shape: " + shape + "}\nnodes:\n  - {op: " + op +
          ", inputs: [x], outputs: [y], attrs: " + attrs + "}\noutputs: [y]\n",
      "r.yaml");
  const scheduler::Partition p = scheduler::partition_graph(g);
  return make_measure_task(g, p.subgraphs.at(0), ir::lower_subgraph(g, p.subgraphs.at(0)), 5);
}

// The host with two cores: whether a reduction has rows enough depends on the cores.
ir::Target two_cores() {
  ir::Target t = ir::host_target();
  t.cores = 2;
  return t;
}

TEST(RFactor, FewRowsGetAFactoredSketchThatMeasuresCorrect) {
  const ir::Target target = two_cores();
  for (const std::string op : {"ReduceSum", "ReduceMean", "Softmax"}) {
    const MeasureTask task = reduce_task("[2, 3000]", op);
    const scheduler::Sketches sketches = scheduler::generate_sketches(task.program, target);
    ASSERT_EQ(sketches.size(), 2u) << op;
    EXPECT_EQ(sketches[0].name().find("rfactor"), std::string::npos);
    EXPECT_EQ(sketches[1].name().rfind("rfactor", 0), 0u) << sketches[1].name();
    MeasureOptions quick;
    quick.min_seconds = 0.0002;
    quick.repeats = 1;
    Measurer m(task, target, quick);
    const MeasureResult d =
        m.measure(sketches[1].decisions(scheduler::default_values(sketches[1])));
    EXPECT_EQ(d.status, scheduler::MeasureStatus::Ok) << op << ": " << d.reason;
    std::mt19937_64 rng(11);
    for (int i = 0; i < 6; ++i) {
      const std::vector<int64_t> v = scheduler::random_values(sketches[1], rng);
      const MeasureResult r = m.measure(sketches[1].decisions(v));
      EXPECT_EQ(r.status, scheduler::MeasureStatus::Ok)
          << op << ": " << r.reason << "\n"
          << scheduler::space_schedule_text(sketches[1], v);
    }
  }
}

TEST(RFactor, RowsEnoughGetOneSketch) {
  const MeasureTask task = reduce_task("[512, 64]", "ReduceMean");
  EXPECT_EQ(scheduler::generate_sketches(task.program, two_cores()).size(), 1u);
}

TEST(RFactor, TheFactorMustDivideTheAxis) {
  const MeasureTask task = reduce_task("[2, 3000]", "ReduceMean");
  int reduction = -1;
  for (size_t s = 0; s < task.program.stages.size(); ++s)
    if (!ir::is_pointwise(task.program.stages[s])) reduction = static_cast<int>(s);
  ASSERT_GE(reduction, 0);
  using scheduler::Decision;
  using scheduler::DecisionKind;
  EXPECT_THROW(scheduler::apply_schedule(task.program,
                                         {Decision{DecisionKind::RFactor, reduction, -1, {0, 7}}}),
               scheduler::InvalidDecision);
  EXPECT_THROW(scheduler::apply_schedule(
                   task.program, {Decision{DecisionKind::RFactor, reduction, -1, {0, 3000}}}),
               scheduler::InvalidDecision);
  const scheduler::ScheduleState st = scheduler::apply_schedule(
      task.program, {Decision{DecisionKind::RFactor, reduction, -1, {0, 40}}});
  EXPECT_EQ(st.te.stages.size(), task.program.stages.size() + 1);
  EXPECT_EQ(st.te.stages[static_cast<size_t>(reduction)].axes.back().extent, 40);
}

}  // namespace
}  // namespace tlmc::tune
