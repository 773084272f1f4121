// Tuning records through the real command, as builds treat them: tlmc killed with SIGKILL
// at random points while it tunes, each kill followed by `tlmc db check` and a resumed run,
// loses no record that was committed before the kill; eight tlmc processes tuning into one
// file at once all finish, with no busy error, and lose nothing (a second run of each
// finds all it needs and measures nothing). scripts/kill_tuning.sh runs the kills 100
// times.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include "scheduler/tuning_db.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

std::string tlmc(const std::string& args) { return std::string(TLMC_EXE) + " " + args; }

using RecordId = std::tuple<std::string, std::string, std::string>;  // workload, target, schedule

std::set<RecordId> records_of(const std::string& db) {
  std::set<RecordId> ids;
  for (const scheduler::TuningRecord& r :
       scheduler::TuningDb::open(db, scheduler::DbAccess::Read).all())
    ids.insert({r.workload_key, r.target, r.schedule});
  return ids;
}

pid_t start(const std::string& command) {
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", ("exec " + command + " >/dev/null 2>&1").c_str(), nullptr);
    _exit(127);
  }
  return pid;
}

TEST(TuningRecordsSurvive, KillsAtRandomPointsLoseNoCommittedRecord) {
  TempDir dir;
  write_file(dir.file("m.yaml"), product_softmax_yaml(24, 40, 56));
  const std::string db = dir.file("t.db");
  const std::string args =
      dir.file("m.yaml") + " -O3 --trials 48 --tuning-db " + db + " -o " + dir.file("o");
  std::mt19937 rng(20261129);
  std::set<RecordId> committed;
  int killed_while_tuning = 0;
  for (int round = 0; round < 5; ++round) {
    const pid_t pid = start(tlmc(args));
    // Killed at a random point: starting, opening the database, measuring, or writing.
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 2400));
    if (access(db.c_str(), F_OK) == 0) committed = records_of(db);  // all committed by now
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) ++killed_while_tuning;
    if (access(db.c_str(), F_OK) != 0) continue;  // killed before it made the file
    const CommandResult check = run_command(tlmc("db check --tuning-db " + db));
    EXPECT_EQ(check.exit_code, 0) << check.out;
    EXPECT_EQ(check.out, db + ": ok\n") << "round " << round;
    const std::set<RecordId> after = records_of(db);
    for (const RecordId& r : committed)
      EXPECT_TRUE(after.count(r)) << "round " << round << ": a committed record of "
                                  << std::get<0>(r) << " was lost";
  }
  EXPECT_GE(killed_while_tuning, 3) << "most runs must be killed, not finish";
  EXPECT_FALSE(committed.empty()) << "no run was killed after committing anything";
  const CommandResult resumed = run_command(tlmc(args));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.out;
  const std::set<RecordId> final_records = records_of(db);
  for (const RecordId& r : committed) EXPECT_TRUE(final_records.count(r));
  // The resumed run finished the trials, from what the killed ones left.
  const CommandResult again = run_command(tlmc(args));
  EXPECT_EQ(records_of(db), final_records) << "a finished run measured again:\n" << again.out;
}

TEST(TuningRecordsSurvive, EightBuildsTuneIntoOneFileAtOnce) {
  TempDir dir;
  const std::string db = dir.file("shared.db");
  constexpr int kBuilds = 8;
  std::vector<std::string> commands;
  for (int b = 0; b < kBuilds; ++b) {
    const std::string model = dir.file("m" + std::to_string(b) + ".yaml");
    write_file(model, product_softmax_yaml(8 + b, 16 + 3 * b, 24));  // its own workloads
    commands.push_back(tlmc(model + " -O3 --trials 6 --tuning-db " + db + " -o " +
                            dir.file("out" + std::to_string(b) + "/lib.a") + " > " +
                            dir.file("log" + std::to_string(b)) + " 2>&1"));
  }
  std::vector<pid_t> pids;
  for (const std::string& c : commands) {
    const pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", c.c_str(), nullptr);
      _exit(127);
    }
    pids.push_back(pid);
  }
  for (int b = 0; b < kBuilds; ++b) {
    int status = 0;
    ASSERT_EQ(waitpid(pids[b], &status, 0), pids[b]);
    const std::string log = read_file(dir.file("log" + std::to_string(b)));
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "build " << b << ":\n" << log;
    EXPECT_EQ(log.find("busy"), std::string::npos) << log;
    EXPECT_EQ(log.find("locked"), std::string::npos) << log;
  }
  const CommandResult check = run_command(tlmc("db check --tuning-db " + db));
  EXPECT_EQ(check.out, db + ": ok\n");
  // Nothing lost: each build again finds the trials it made and measures nothing more.
  const std::set<RecordId> all = records_of(db);
  std::set<std::string> workloads;
  for (const RecordId& r : all) workloads.insert(std::get<0>(r));
  EXPECT_EQ(workloads.size(), static_cast<size_t>(2 * kBuilds)) << "two kernels a model";
  for (int b = 0; b < kBuilds; ++b) {
    const CommandResult r = run_command(commands[b].substr(0, commands[b].find(" > ")));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("2 kernels (2 from tuning records)"), std::string::npos) << r.out;
  }
  EXPECT_EQ(records_of(db), all) << "a second run measured again: a record was lost";
}

}  // namespace
}  // namespace tlmc::test
