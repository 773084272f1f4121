// A model with convolutions may run its activations in the model's layout, channels-last or
// with blocked channels (with conversions where a chain meets the rest of the graph). -O3
// tunes the subgraphs of all and times each plan whole in the model; the library is built
// in the plan measured fastest, else in the one whose records add up to less latency, or
// with each chain in the layout its records favour, and follows the records when they
// change their minds. The user may fix the layout instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "driver/compile.h"
#include "driver/layout_plans.h"
#include "frontend/fold_constants.h"
#include "ir/target.h"
#include "ir/te_text.h"
#include "scheduler/sketch_rules.h"
#include "scheduler/tuning_db.h"
#include "support/test_support.h"
#include "tune/confirm_in_model.h"

namespace tlmc::test {
namespace {

const char* const kConv = R"(tlmc: 1
name: conv
inputs:
  x: {shape: [1, 12, 12, 12]}
weights:
  w: {shape: [16, 12, 3, 3], init: {uniform: [-0.3, 0.3]}, seed: 3}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c], outputs: [y]}
outputs: [y]
)";

// Per workload key: the record a build takes as its best (TuningDb::best: confirmed records
// first), among the kernels measured alone (not the -O3 in-model timings).
std::map<std::string, scheduler::TuningRecord> best_by_key(const std::string& db) {
  const scheduler::TuningDb tuning = scheduler::TuningDb::open(db, scheduler::DbAccess::Read);
  std::map<std::string, scheduler::TuningRecord> out;
  for (const scheduler::TuningRecord& r : tuning.all()) {
    if (r.target.find(tune::kInModelContext) != std::string::npos || out.count(r.workload_key))
      continue;
    if (std::optional<scheduler::TuningRecord> best = tuning.best(r.workload_key, r.target))
      out[r.workload_key] = *best;
  }
  return out;
}

TEST(ActivationLayouts, TheFasterLayoutIsCompiled) {
  if (ir::host_target().isa == ir::Isa::Generic) GTEST_SKIP() << "no vector ISA: one layout";
  TempDir dir;
  write_file(dir.file("conv.yaml"), kConv);
  const std::string db = dir.file("t.db");
  CommandResult tuned = run_command(std::string(TLMC_EXE) + " " + dir.file("conv.yaml") +
                                    " -O3 --trials 40 --tuning-db " + db + " -o " + dir.file("a"));
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  // The model's layout: Conv + Relu. Channels-last: x converted, Conv + Relu, y converted;
  // its twin: x's conversion inside the Conv's kernel, y converted. (12 input channels are
  // no whole block of any vector width: no blocked plan.)
  EXPECT_NE(tuned.out.find("tuned 5 subgraphs"), std::string::npos) << tuned.out;
  EXPECT_NE(tuned.out.find("layout plans (estimated latency): 0: "), std::string::npos)
      << tuned.out;
  std::map<std::string, scheduler::TuningRecord> best = best_by_key(db);
  ASSERT_EQ(best.size(), 5u) << "every subgraph of the three plans measured";

  // Every plan has every record: each was timed whole in the model, and the fastest is
  // built, as a later build with the database builds it too.
  const size_t timed = tuned.out.find("layout plans timed in the model: ");
  ASSERT_NE(timed, std::string::npos) << tuned.out;
  std::vector<double> ms(3, 0);
  ASSERT_EQ(std::sscanf(tuned.out.c_str() + timed,
                        "layout plans timed in the model: model layout %lf ms, channels-last "
                        "%lf ms, channels-last (conversions fused) %lf ms",
                        &ms[0], &ms[1], &ms[2]),
            3)
      << tuned.out;

  driver::CompileOptions o;
  o.model_path = dir.file("conv.yaml");
  o.target = ir::host_target();
  o.tuning_db = db;
  const driver::SplitModel split =
      driver::split_model(frontend::fold_constants(driver::read_model(o)), o.target,
                          driver::ActivationLayout::Auto, nullptr);
  ASSERT_EQ(split.plans.size(), 3u);
  auto keys_of = [&](size_t p) {
    std::set<std::string> keys;
    for (const driver::Occurrence& c : split.plans[p].occurrences)
      keys.insert(split.distinct[static_cast<size_t>(c.distinct)].key);
    return keys;
  };
  std::ostringstream log;
  o.log_stream = &log;
  auto compiled_keys = [&] {
    log.str("");
    const driver::CompiledModel m = driver::compile_model(o);
    std::set<std::string> keys;
    for (const codegen::KernelInfo& k : m.plan.kernels) keys.insert(k.workload_key);
    return keys;
  };
  const std::set<std::string> chosen = compiled_keys();
  size_t plan = 0;
  while (plan < 3 && keys_of(plan) != chosen) ++plan;
  ASSERT_LT(plan, 3u) << log.str();
  EXPECT_NE(
      log.str().find("activation layout: " + split.plans[plan].name + " (measured in the model)"),
      std::string::npos)
      << log.str();
  EXPECT_EQ(ms[plan], *std::min_element(ms.begin(), ms.end())) << tuned.out;

  // Another plan's best schedules, recorded again as together ten times faster than the
  // chosen plan's (a faster success replaces the row): its measurement, and so all of
  // them, have lapsed, and the library follows the records.
  const size_t other = plan == 0 ? 1 : 0;
  double chosen_seconds = 0;
  for (const std::string& k : chosen) chosen_seconds += best.at(k).seconds;
  const std::set<std::string> other_keys = keys_of(other);
  for (const std::string& k : other_keys) {
    scheduler::TuningRecord again = best.at(k);
    again.seconds = chosen_seconds / 10 / static_cast<double>(other_keys.size());
    scheduler::TuningDb::open(db, scheduler::DbAccess::Write).add({again});
  }
  EXPECT_EQ(compiled_keys(), other_keys);
  EXPECT_NE(log.str().find("(tuning records)"), std::string::npos) << log.str();
  CommandResult check = run_command(std::string(TLMC_EXE) + " -O0 " + dir.file("conv.yaml") +
                                    " --check --tuning-db " + db);
  EXPECT_EQ(check.exit_code, 0) << check.out;
}

// Two chains, a dense convolution and a depthwise one, apart (a Softmax over the channels
// between them stays in the model's layout): with records that favour blocked channels for the
// first and channels-last for the second, the library mixes them, and computes the model.
TEST(ActivationLayouts, EachChainTakesTheLayoutItsRecordsFavour) {
  if (ir::host_target().isa == ir::Isa::Generic) GTEST_SKIP() << "no vector ISA: one layout";
  TempDir dir;
  write_file(dir.file("two.yaml"), R"(tlmc: 1
name: two
inputs:
  x: {shape: [1, 16, 10, 10]}
weights:
  w1: {shape: [32, 16, 3, 3], init: {uniform: [-0.3, 0.3]}, seed: 1}
  w2: {shape: [32, 1, 3, 3], init: {uniform: [-0.3, 0.3]}, seed: 2}
nodes:
  - {op: Conv, inputs: [x, w1], outputs: [c1], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c1], outputs: [r1]}
  - {op: Softmax, inputs: [r1], outputs: [n1], attrs: {axis: 1}}
  - {op: Conv, inputs: [n1, w2], outputs: [y], attrs: {pads: [1, 1, 1, 1], group: 32}}
outputs: [y]
)");
  driver::CompileOptions o;
  o.model_path = dir.file("two.yaml");
  o.target = ir::host_target();
  o.tuning_db = dir.file("t.db");
  const ir::Graph graph = frontend::fold_constants(driver::read_model(o));
  const driver::SplitModel split =
      driver::split_model(graph, o.target, driver::ActivationLayout::Auto, nullptr);
  // The model's layout, channels-last, blocked, and the last two with x's conversion fused.
  ASSERT_EQ(split.plans.size(), 5u);
  // Each subgraph's -O0 schedule, recorded with a time that favours the blocked plan for
  // the first chain (0) and channels-last for the second (1).
  std::map<std::string, double> seconds;
  for (const driver::LayoutPlan& plan : split.plans)
    for (const driver::Occurrence& c : plan.occurrences) {
      const int chain = plan.chain_of_node.at(static_cast<size_t>(c.nodes[0]));
      const bool favoured =
          chain < 0 || (chain == 0 && plan.layout.block) || (chain == 1 && plan.layout.last);
      const std::string& key = split.distinct[static_cast<size_t>(c.distinct)].key;
      // A kernel two chains share (the same conversion back) takes the faster time.
      const double t = favoured ? 1e-6 : 1e-4;
      seconds[key] = seconds.count(key) ? std::min(seconds[key], t) : t;
    }
  std::vector<scheduler::TuningRecord> records;
  for (const driver::Distinct& d : split.distinct) {
    const scheduler::Sketches sketches = scheduler::generate_sketches(d.lowered.program, o.target);
    records.push_back(scheduler::TuningRecord{
        d.key, o.target.descriptor(),
        scheduler::space_schedule_text(
            sketches, scheduler::SpacePoint{0, scheduler::default_values(sketches[0])}),
        scheduler::MeasureStatus::Ok, seconds.at(d.key), "", "2026-11-26T10:00:00Z",
        ir::te_to_text(d.lowered.program), 0});
  }
  scheduler::TuningDb::open(o.tuning_db, scheduler::DbAccess::Write).add(records);
  std::ostringstream log;
  o.log_stream = &log;
  driver::compile_model(o);
  EXPECT_NE(log.str().find("tlmc: activation layout: mixed (tuning records)"), std::string::npos)
      << log.str();
  CommandResult check = run_command(std::string(TLMC_EXE) + " -O0 " + o.model_path +
                                    " --check -v --tuning-db " + o.tuning_db);
  EXPECT_EQ(check.exit_code, 0) << check.out;
  EXPECT_NE(check.out.find("activation layout: mixed"), std::string::npos) << check.out;
}

// --activation-layout fixes the layout: -O3 tunes that layout's subgraphs only, and every
// level builds it (channels-last on any target, the generic one included), correctly.
TEST(ActivationLayouts, AFixedLayoutIsTheOnlyOneTunedAndBuilt) {
  TempDir dir;
  write_file(dir.file("conv.yaml"), kConv);
  const std::string db = dir.file("t.db");
  const std::string tlmc =
      std::string(TLMC_EXE) + " " + dir.file("conv.yaml") + " --tuning-db " + db;
  CommandResult model =
      run_command(tlmc + " -O3 --trials 8 --activation-layout model -o " + dir.file("a"));
  ASSERT_EQ(model.exit_code, 0) << model.out;
  EXPECT_NE(model.out.find("tuned 1 subgraph with"), std::string::npos) << model.out;
  EXPECT_EQ(model.out.find("layout plans"), std::string::npos) << model.out;
  if (ir::host_target().isa != ir::Isa::Generic) {
    CommandResult cl =
        run_command(tlmc + " -O3 --trials 8 --activation-layout channels-last -o " + dir.file("b"));
    ASSERT_EQ(cl.exit_code, 0) << cl.out;
    // x converted, Conv + Relu, y converted; x's conversion with Conv + Relu.
    EXPECT_NE(cl.out.find("tuned 4 subgraphs with"), std::string::npos) << cl.out;
    CommandResult check = run_command(tlmc + " --check --activation-layout channels-last");
    EXPECT_EQ(check.exit_code, 0) << check.out;
  }
  for (const char* target : {"x86-64", "host"}) {
    CommandResult graph = run_command(std::string(TLMC_EXE) + " -O0 " + dir.file("conv.yaml") +
                                      " --dump=graph --activation-layout channels-last --target " +
                                      target + " -o " + dir.file("c"));
    ASSERT_EQ(graph.exit_code, 0) << graph.out;
    EXPECT_NE(graph.out.find("channels_last"), std::string::npos) << target << "\n" << graph.out;
    CommandResult check = run_command(std::string(TLMC_EXE) + " -O0 " + dir.file("conv.yaml") +
                                      " --check --activation-layout channels-last --target " +
                                      target + " --tuning-db " + dir.file("none.db"));
    EXPECT_EQ(check.exit_code, 0) << target << "\n" << check.out;
  }
}

}  // namespace
}  // namespace tlmc::test
