// The task scheduler of -O3 on real measurements: every task gets a first round, then the
// budget goes where the model's latency is (a subgraph that runs ten times weighs ten
// times), every measurement is recorded, a second run with the same budget measures
// nothing, and a task that stops improving stops.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "scheduler/partition.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"
#include "support/test_support.h"
#include "tune/tuner.h"

namespace tlmc::tune {
namespace {

MeasureTask matmul_task(int n) {
  const ir::Graph g = frontend::read_yaml_text(
      "tlmc: 1\nname: mm\ninputs:\n  a: {shape: [24, 40]}\n  b: {shape: [40, " + std::to_string(n) +
          "]}\nnodes:\n  - {op: MatMul, inputs: [a, b], outputs: [c]}\n" + "outputs: [c]\n",
      "mm.yaml");
  const scheduler::Partition p = scheduler::partition_graph(g);
  return make_measure_task(g, p.subgraphs.at(0), ir::lower_subgraph(g, p.subgraphs.at(0)), 1);
}

TEST(TaskScheduler, TrialsGoWhereTheLatencyIs) {
  test::TempDir dir;
  scheduler::TuningDb db = scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Write);
  const std::vector<TuneTask> tasks = {{matmul_task(48), 10}, {matmul_task(40), 1}};
  TuneOptions options;
  options.trials = 48;
  options.batch = 8;
  options.measure.min_seconds = 0.001;
  options.measure.repeats = 3;
  std::ostringstream progress;
  const std::vector<TaskReport> r =
      tune_tasks(tasks, ir::host_target(), db, options, progress, false);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].trials + r[1].trials, 48);
  EXPECT_GE(r[1].trials, 8) << "every task gets a first round";
  EXPECT_GT(r[0].trials, r[1].trials) << "the subgraph run ten times gets more trials";
  EXPECT_EQ(db.all().size(), 50u) << "48 candidates and 2 baselines, all recorded";
  for (const TaskReport& t : r) EXPECT_GT(t.best_seconds, 0);
  // The summary says where the time went.
  EXPECT_NE(progress.str().find("proposing "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find(", compiling "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find(", running "), std::string::npos) << progress.str();

  std::ostringstream again;
  const std::vector<TaskReport> r2 =
      tune_tasks(tasks, ir::host_target(), db, options, again, false);
  EXPECT_NE(again.str().find("with 48 trials (0 measured now)"), std::string::npos) << again.str();
  EXPECT_EQ(db.all().size(), 50u);
}

// Regression: a task none of whose candidates ran (the baseline too) kept the largest
// gradient, so the task scheduler gave it trial after trial, each costing the whole time
// limit (BERT's word embeddings: 97 candidates in 17 minutes). A round in which every
// candidate runs out of time ends the task.
TEST(TaskScheduler, TimedOutCandidatesDrawNoMoreTrials) {
  test::TempDir dir;
  scheduler::TuningDb db = scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Write);
  const std::vector<TuneTask> tasks = {{matmul_task(48), 10}, {matmul_task(40), 1}};
  TuneOptions options;
  options.search = SearchKind::Random;
  options.trials = 64;
  options.batch = 8;
  options.measure.timeout_seconds = 1e-4;  // nothing answers in time
  std::ostringstream progress;
  const std::vector<TaskReport> r =
      tune_tasks(tasks, ir::host_target(), db, options, progress, false);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].trials, 8) << progress.str();
  EXPECT_EQ(r[1].trials, 8) << progress.str();
  for (const scheduler::TuningRecord& rec : db.all())
    EXPECT_EQ(rec.status, scheduler::MeasureStatus::TimedOut) << rec.reason;
}

// A task that stops improving stops before the budget is spent (early stopping), though its
// space has more to offer: a later run without early stopping measures new points in it.
TEST(TaskScheduler, ATaskThatStopsImprovingStops) {
  test::TempDir dir;
  scheduler::TuningDb db = scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Write);
  const std::vector<TuneTask> tasks = {{matmul_task(48), 1}};
  TuneOptions options;
  options.search = SearchKind::Random;
  options.trials = 400;
  options.batch = 8;
  options.early_stopping = 8;
  options.measure.min_seconds = 0.001;
  options.measure.repeats = 3;
  std::ostringstream progress;
  const int64_t stopped =
      tune_tasks(tasks, ir::host_target(), db, options, progress, false).at(0).trials;
  EXPECT_LT(stopped, 400) << progress.str();
  EXPECT_GE(stopped, 8);

  options.early_stopping = 0;
  options.trials = stopped + 16;
  std::ostringstream again;
  EXPECT_EQ(tune_tasks(tasks, ir::host_target(), db, options, again, false).at(0).trials,
            stopped + 16)
      << again.str();
}

// With two activation layouts (plans), each plan's latency sums the best times of the
// subgraphs it runs, occurrences counted; a plan with a subgraph never measured has none;
// the report gives shares of the faster plan only.
TEST(TaskScheduler, LayoutPlansAreWeighedByTheirSubgraphs) {
  auto report = [](const char* key, std::vector<int> plans, double best) {
    TaskReport r{key, "", *std::max_element(plans.begin(), plans.end()), plans, 2e6};
    r.trials = 4;
    r.default_seconds = 2 * best;
    r.best_seconds = best;
    return r;
  };
  // Subgraph a runs in both plans, b twice in the model's layout, c once in the other.
  std::vector<TaskReport> r = {report("a", {1, 1}, 1e-3), report("b", {2, 0}, 3e-3),
                               report("c", {0, 1}, 2e-3)};
  std::vector<double> plans = plan_latencies(r);
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_DOUBLE_EQ(plans[0], 7e-3);
  EXPECT_DOUBLE_EQ(plans[1], 3e-3);
  std::ostringstream table;
  print_tune_report(table, r);
  EXPECT_NE(table.str().find("0: 7.000 ms, 1: 3.000 ms (least)"), std::string::npos) << table.str();
  EXPECT_NE(table.str().find("  b                     2   0.0%"), std::string::npos)
      << "the model does not run b\n"
      << table.str();
  EXPECT_NE(table.str().find("  c                     1  66.7%"), std::string::npos) << table.str();

  r[2].best_seconds = 0;  // c never ran
  plans = plan_latencies(r);
  EXPECT_DOUBLE_EQ(plans[0], 7e-3);
  EXPECT_EQ(plans[1], 0);
}

// A record that no longer fits the spaces (a value the space does not list: a record of
// another tlmc) is left out, neither observed by the search nor counted, and the search
// goes on; with random search too.
TEST(TaskScheduler, RecordsThatNoLongerApplyAreLeftOut) {
  test::TempDir dir;
  scheduler::TuningDb db = scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Write);
  const std::vector<TuneTask> tasks = {{matmul_task(48), 1}};
  const ir::Target target = ir::host_target();
  const scheduler::Sketches sketches =
      scheduler::generate_sketches(tasks[0].measure.program, target);
  std::vector<int64_t> values = scheduler::default_values(sketches[0]);
  ASSERT_FALSE(values.empty());
  values[0] = 7;  // no tile of 48 or 24
  scheduler::TuningRecord stale;
  stale.workload_key = tasks[0].measure.workload_key;
  stale.target = target.descriptor();
  stale.schedule = scheduler::space_schedule_text(sketches[0], values);
  stale.status = scheduler::MeasureStatus::Ok;
  stale.seconds = 1e-9;
  stale.measured_at = scheduler::utc_now();
  db.add({stale});
  TuneOptions options;
  options.search = SearchKind::Random;
  options.trials = 8;
  options.batch = 8;
  options.measure.min_seconds = 0.001;
  options.measure.repeats = 3;
  std::ostringstream progress;
  std::vector<TaskReport> r;
  ASSERT_NO_THROW(r = tune_tasks(tasks, target, db, options, progress, false));
  EXPECT_EQ(r.at(0).trials, 8);
  EXPECT_GT(r.at(0).best_seconds, 1e-9) << "the stale record's time is not the best";
  EXPECT_NE(progress.str().find("with 8 trials (8 measured now)"), std::string::npos)
      << progress.str();
}

}  // namespace
}  // namespace tlmc::tune
