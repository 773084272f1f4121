// -O3's last step times each kernel's candidates (its fastest records, then its -O0
// schedule) inside builds of the model and records those times beside the isolated ones; a
// build takes the candidate of least in-model time. Here with a real tuning database and
// builds whose times are given, so that what is built, recorded and chosen can be checked.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "support/test_support.h"
#include "tune/confirm_in_model.h"

namespace tlmc::tune {
namespace {

const std::string kDescriptor = std::string("hw1 test") + kInModelContext;

// A kernel of `records` recorded schedules "<key>/r<i>", then its -O0 schedule "<key>/O0".
KernelCandidates kernel(const std::string& key, size_t records) {
  KernelCandidates c;
  c.workload_key = key;
  c.workload = "workload " + key;
  for (size_t i = 0; i < records; ++i) c.texts.push_back(key + "/r" + std::to_string(i));
  c.texts.push_back(key + "/O0");
  c.schedules.resize(c.texts.size());
  c.records = records;
  c.default_index = records;
  return c;
}

// Builds whose kernel k takes seconds[k][choice[k]]; the run takes their sum. Each build's
// choice is kept.
struct Builds {
  std::vector<std::vector<double>> seconds;
  std::vector<std::vector<size_t>> made;
  RunVariant run() {
    return [this](const std::vector<size_t>& choice) {
      made.push_back(choice);
      VariantTimes t;
      for (size_t k = 0; k < choice.size(); ++k) {
        t.kernel_seconds.push_back(seconds[k][choice[k]]);
        t.run_seconds += t.kernel_seconds.back();
      }
      return t;
    };
  }
};

TEST(InModel, CandidatesAreTimedInTurnThenTheFastestOfEachAndRecorded) {
  test::TempDir dir;
  scheduler::TuningDb db = scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Write);
  const std::vector<KernelCandidates> kernels = {kernel("a", 3), kernel("b", 1)};
  // a: its second record is fastest in the model; b: its -O0 schedule is.
  Builds builds{{{3e-3, 1e-3, 2e-3, 4e-3}, {2e-3, 1e-3}}, {}};
  const InModelReport r = confirm_in_model(kernels, builds.run(), db, kDescriptor);
  ASSERT_TRUE(r.measured);
  // Records 0, 1, 2 of a (b cycles through its one), then -O0's, then the chosen.
  const std::vector<std::vector<size_t>> expected = {{0, 0}, {1, 0}, {2, 0}, {3, 1}, {1, 1}};
  EXPECT_EQ(builds.made, expected);
  EXPECT_EQ(r.builds, 5);
  EXPECT_DOUBLE_EQ(r.records_run, 5e-3);
  EXPECT_DOUBLE_EQ(r.default_run, 5e-3);
  EXPECT_DOUBLE_EQ(r.chosen_run, 2e-3);

  EXPECT_EQ(chosen_candidate(kernels[0], db, kDescriptor), 1u);
  EXPECT_EQ(chosen_candidate(kernels[1], db, kDescriptor), 1u);
  const std::vector<scheduler::TuningRecord> a = db.records("a", kDescriptor);
  ASSERT_EQ(a.size(), 4u) << "one record per schedule";
  EXPECT_EQ(a[0].schedule, "a/r1");
  EXPECT_DOUBLE_EQ(a[0].seconds, 1e-3);
  EXPECT_EQ(a[0].workload, "workload a");
  EXPECT_TRUE(db.records("a", "hw1 test").empty()) << "never mixed with isolated records";

  // Every candidate has its in-model record: nothing is built again.
  Builds again{builds.seconds, {}};
  EXPECT_FALSE(confirm_in_model(kernels, again.run(), db, kDescriptor).measured);
  EXPECT_TRUE(again.made.empty());
  // A new record among the fastest is a candidate never timed in the model: all are again.
  const std::vector<KernelCandidates> more = {kernel("a", 3), kernel("b", 2)};
  Builds third{{{3e-3, 1e-3, 2e-3, 4e-3}, {2e-3, 5e-4, 1e-3}}, {}};
  EXPECT_TRUE(confirm_in_model(more, third.run(), db, kDescriptor).measured);
  EXPECT_EQ(chosen_candidate(more[1], db, kDescriptor), 1u);
}

TEST(InModel, WithoutInModelRecordsTheFastestRecordIsChosenElseTheDefault) {
  test::TempDir dir;
  const scheduler::TuningDb db =
      scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Read);
  EXPECT_EQ(chosen_candidate(kernel("a", 2), db, kDescriptor), 0u);
  EXPECT_EQ(chosen_candidate(kernel("a", 0), db, kDescriptor), 0u) << "-O0's alone";
}

TEST(InModel, ABuildReportingTheWrongNumberOfKernelsIsABug) {
  test::TempDir dir;
  scheduler::TuningDb db = scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Write);
  const RunVariant wrong = [](const std::vector<size_t>&) { return VariantTimes{1e-3, {}}; };
  EXPECT_THROW(confirm_in_model({kernel("a", 1)}, wrong, db, kDescriptor), InternalError);
}

}  // namespace
}  // namespace tlmc::tune
