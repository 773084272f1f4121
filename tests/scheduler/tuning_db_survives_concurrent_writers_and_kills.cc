// The tuning database shared as a parallel build shares it: several tlmc processes writing
// one file at once, and processes killed (SIGKILL) in the middle of writing. Real processes
// on a real SQLite file: every committed record is there, no transaction is half there, the
// file passes SQLite's integrity check, and a new process goes on from what was recorded.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <thread>

#include "scheduler/tuning_db.h"
#include "support/test_support.h"

namespace tlmc::scheduler {
namespace {

TuningRecord record(const std::string& key, const std::string& schedule, double seconds) {
  return TuningRecord{key, "hw1 test", schedule, MeasureStatus::Ok, seconds, "", utc_now(), ""};
}

// Runs `body` in a child process; returns its pid. The child exits 0, or 1 on an exception.
template <typename F>
pid_t spawn(F body) {
  const pid_t pid = fork();
  if (pid != 0) return pid;
  int status = 0;
  try {
    body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", static_cast<int>(getpid()), e.what());
    status = 1;
  }
  _exit(status);
}

TEST(TuningDbProcesses, EightConcurrentWritersLoseNothing) {
  test::TempDir dir;
  const std::string path = dir.file("shared.db");
  constexpr int kProcesses = 8, kRecords = 60;
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p)
    children.push_back(spawn([&] {
      char c;
      close(go[1]);
      if (read(go[0], &c, 1) != 0) _exit(2);  // all start together, when the pipe closes
      TuningDb db = TuningDb::open(path, scheduler::DbAccess::Write);
      for (int i = 0; i < kRecords; ++i)  // one transaction each: they interleave
        db.add({record("w" + std::to_string(p), "s" + std::to_string(i), 1e-3 * (i + 1))});
    }));
  close(go[0]);
  close(go[1]);
  for (pid_t c : children) {
    int status = 0;
    ASSERT_EQ(waitpid(c, &status, 0), c);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
  TuningDb db = TuningDb::open(path, scheduler::DbAccess::Read);
  EXPECT_EQ(db.integrity_check(), "ok");
  EXPECT_EQ(db.all().size(), static_cast<size_t>(kProcesses * kRecords));
  for (int p = 0; p < kProcesses; ++p)
    EXPECT_EQ(db.best("w" + std::to_string(p), "hw1 test").value_or(TuningRecord{}).schedule, "s0");
}

TEST(TuningDbProcesses, KilledWritersLeaveWholeTransactionsAndANewOneResumes) {
  test::TempDir dir;
  const std::string path = dir.file("killed.db");
  constexpr size_t kBatch = 7;  // records per transaction
  std::mt19937 rng(12345);
  size_t before = 0;
  for (int round = 0; round < 12; ++round) {
    const pid_t child = spawn([&] {
      TuningDb db = TuningDb::open(path, scheduler::DbAccess::Write);
      for (int t = 0;; ++t) {
        std::vector<TuningRecord> batch;
        for (size_t i = 0; i < kBatch; ++i)
          batch.push_back(record("r" + std::to_string(round) + "." + std::to_string(t),
                                 "s" + std::to_string(i), 1e-3));
        db.add(batch);
      }
    });
    // Killed at a random point: while opening, creating the schema, or mid-transaction.
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 40000));
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer stopped by itself: status " << status;

    TuningDb db = TuningDb::open(path, scheduler::DbAccess::Write);
    ASSERT_EQ(db.integrity_check(), "ok") << "after round " << round;
    std::map<std::string, size_t> per_transaction;
    const std::vector<TuningRecord> all = db.all();
    for (const TuningRecord& r : all) ++per_transaction[r.workload_key];
    for (const auto& [key, n] : per_transaction) EXPECT_EQ(n, kBatch) << key << ": half written";
    EXPECT_GE(all.size(), before) << "committed records were lost";
    before = all.size();
  }
  // A new process resumes from what was recorded.
  TuningDb db = TuningDb::open(path, scheduler::DbAccess::Write);
  db.add({record("after", "s", 1e-3)});
  EXPECT_EQ(db.all().size(), before + 1);
  EXPECT_GT(before, 0u) << "no writer ever committed: the test did not test anything";
}

}  // namespace
}  // namespace tlmc::scheduler
