// -O3 through the real command: it measures candidates on this machine, records every one
// in the tuning database, times the best few in the model, reports what it found, and a
// second run goes on from the records instead of measuring again, giving the same bytes
// (runs killed at random points: tuning_records_survive_kills_and_parallel_builds.cc).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "scheduler/tuning_db.h"
#include "support/test_support.h"
#include "tune/confirm_in_model.h"

namespace tlmc::test {
namespace {

std::string tlmc(const std::string& args) { return std::string(TLMC_EXE) + " " + args; }

const std::string kModel = product_softmax_yaml(16, 32, 48);

// Records of kernels measured alone (in_model: false) or in the model.
size_t records_in(const std::string& db, bool in_model = false) {
  size_t n = 0;
  for (const scheduler::TuningRecord& r :
       scheduler::TuningDb::open(db, scheduler::DbAccess::Read).all())
    n += (r.target.find(tune::kInModelContext) != std::string::npos) == in_model;
  return n;
}

// Workloads with records measured alone (in_model: false) or in the model.
std::set<std::string> workloads_in(const std::string& db, bool in_model) {
  std::set<std::string> keys;
  for (const scheduler::TuningRecord& r :
       scheduler::TuningDb::open(db, scheduler::DbAccess::Read).all())
    if ((r.target.find(tune::kInModelContext) != std::string::npos) == in_model)
      keys.insert(r.workload_key);
  return keys;
}

TEST(TuneO3, MeasuresRecordsReportsAndResumes) {
  TempDir dir;
  write_file(dir.file("small.yaml"), kModel);
  const std::string db = " --tuning-db " + dir.file("t.db");
  const std::string args = dir.file("small.yaml") + " -O3 --trials 8" + db;
  CommandResult first = run_command(tlmc(args + " -o " + dir.file("a")));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_NE(first.out.find("tlmc: tuned 2 subgraphs with 8 trials"), std::string::npos)
      << first.out;
  EXPECT_NE(first.out.find("speedup over -O0"), std::string::npos) << first.out;
  EXPECT_EQ(records_in(dir.file("t.db")), 10u) << "8 candidates and 2 baselines";
  EXPECT_NE(first.out.find("tlmc: timed in the model ("), std::string::npos) << first.out;
  EXPECT_EQ(workloads_in(dir.file("t.db"), true), workloads_in(dir.file("t.db"), false));
  const size_t in_model = records_in(dir.file("t.db"), true);
  // Each subgraph's fastest records were timed again, interleaved, before being trusted: the
  // best of each keeps the median of its re-timings and their spread: its three fastest
  // successes at least (a median slower than another record's single time sends that one
  // to a further pass).
  for (const std::string& key : workloads_in(dir.file("t.db"), false)) {
    size_t ok = 0, confirmed = 0;
    for (const scheduler::TuningRecord& r :
         scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Read).all())
      if (r.workload_key == key && r.target.find(tune::kInModelContext) == std::string::npos &&
          r.status == scheduler::MeasureStatus::Ok) {
        ++ok;
        confirmed += r.spread >= 1;
      }
    EXPECT_GE(confirmed, std::min<size_t>(3, ok)) << key;
  }

  CommandResult again = run_command(tlmc(args + " -o " + dir.file("b")));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(records_in(dir.file("t.db")), 10u) << "nothing measured again";
  EXPECT_EQ(records_in(dir.file("t.db"), true), in_model) << "nothing timed again";
  EXPECT_EQ(again.out.find("timed in the model"), std::string::npos) << again.out;
  EXPECT_TRUE(read_file(dir.file("a/small.c")) == read_file(dir.file("b/small.c")));

  // Every level reads the records; the chosen schedules check against the reference.
  CommandResult check = run_command(tlmc("-O0 " + dir.file("small.yaml") + " --check" + db));
  EXPECT_EQ(check.exit_code, 0) << check.out;

  CommandResult more =
      run_command(tlmc(dir.file("small.yaml") + " -O3 --trials 16" + db + " -o " + dir.file("c")));
  ASSERT_EQ(more.exit_code, 0) << more.out;
  EXPECT_EQ(records_in(dir.file("t.db")), 18u) << "only the 8 new trials are measured";
}

// --early-stopping N ends a subgraph's search after N trials without a faster schedule: with
// N = 1 the budget of 200 is far from spent (no search improves on every trial).
TEST(TuneO3, EarlyStoppingEndsTheSearchOfASubgraphThatStopsImproving) {
  TempDir dir;
  write_file(dir.file("small.yaml"), kModel);
  const std::string args = dir.file("small.yaml") + " -O3 --trials 200 --activation-layout model" +
                           " --tuning-db " + dir.file("t.db") + " -o " + dir.file("a");
  CommandResult r = run_command(tlmc(args + " --early-stopping 1"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string said = "tlmc: tuned 2 subgraphs with ";
  const size_t at = r.out.find(said);
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_LT(std::stoi(r.out.substr(at + said.size())), 200) << r.out;
  CommandResult bad = run_command(tlmc(args + " --early-stopping -1"));
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_NE(bad.out.find("tlmc: error: --early-stopping takes a count >= 0"), std::string::npos)
      << bad.out;
}

}  // namespace
}  // namespace tlmc::test
