// A convolution that may be computed in the model's layout or channels-last is two tasks
// for -O3; the library then runs the variant whose best record is fastest, and follows the
// records when they change their minds.
#include <gtest/gtest.h>

#include <iterator>
#include <map>

#include "driver/compile.h"
#include "ir/target.h"
#include "scheduler/tuning_db.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

const char* const kConv = R"(tlmc: 1
name: conv
inputs:
  x: {shape: [1, 8, 12, 12]}
weights:
  w: {shape: [16, 8, 3, 3], init: {uniform: [-0.3, 0.3]}, seed: 3}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c], outputs: [y]}
outputs: [y]
)";

// Per workload key: the best successful record.
std::map<std::string, scheduler::TuningRecord> best_by_key(const std::string& db) {
  std::map<std::string, scheduler::TuningRecord> out;
  for (const scheduler::TuningRecord& r : scheduler::TuningDb::open(db, false).all()) {
    if (r.status != scheduler::MeasureStatus::Ok) continue;
    auto it = out.find(r.workload_key);
    if (it == out.end() || r.seconds < it->second.seconds) out[r.workload_key] = r;
  }
  return out;
}

TEST(LayoutVariants, TheFasterVariantIsCompiled) {
  if (ir::host_target().isa == ir::Isa::Generic) GTEST_SKIP() << "no vector ISA: one variant";
  TempDir dir;
  write_file(dir.file("conv.yaml"), kConv);
  const std::string db = dir.file("t.db");
  CommandResult tuned = run_command(std::string(TLMC_EXE) + " " + dir.file("conv.yaml") +
                                    " -O3 --trials 24 --tuning-db " + db + " -o " + dir.file("a"));
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  EXPECT_NE(tuned.out.find("tuned 1 subgraphs as 2 tasks (layout variants)"), std::string::npos)
      << tuned.out;
  std::map<std::string, scheduler::TuningRecord> best = best_by_key(db);
  ASSERT_EQ(best.size(), 2u) << "both variants measured";

  driver::CompileOptions o;
  o.model_path = dir.file("conv.yaml");
  o.target = ir::host_target();
  o.tuning_db = db;
  auto compiled_key = [&] {
    const driver::CompiledModel m = driver::compile_model(o);
    EXPECT_EQ(m.plan.kernels.size(), 1u);
    return m.plan.kernels.at(0).workload_key;
  };
  auto faster = best.begin(), slower = std::next(best.begin());
  if (slower->second.seconds < faster->second.seconds) std::swap(faster, slower);
  EXPECT_EQ(compiled_key(), faster->first);

  // The slower variant's best schedule, recorded again as twice as fast as the other (a
  // faster success replaces the row).
  scheduler::TuningRecord again = slower->second;
  again.seconds = faster->second.seconds / 2;
  scheduler::TuningDb::open(db, false).add({again});
  EXPECT_EQ(compiled_key(), slower->first);
  CommandResult check = run_command(std::string(TLMC_EXE) + " " + dir.file("conv.yaml") +
                                    " --check --tuning-db " + db);
  EXPECT_EQ(check.exit_code, 0) << check.out;
}

}  // namespace
}  // namespace tlmc::test
