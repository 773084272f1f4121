// tlmc processes of one machine time their candidates one at a time (toolchain/timing_lock.h):
// while another process holds the timing lock, a tuning tlmc compiles but does not time, says
// that it waits, and goes on when the lock is let go, its summary counting the wait. A lock
// file tlmc cannot take is said once, and tuning goes on without it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "ir/target.h"
#include "scheduler/tuning_db.h"
#include "support/test_support.h"
#include "toolchain/timing_lock.h"

namespace tlmc {
namespace {

const std::string kMlp = std::string(TLMC_SOURCE_DIR) + "/examples/mlp.yaml";

// Starts `command` in a shell of its own, its output into `log`.
pid_t start(const std::string& command, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", (command + " > " + log + " 2>&1").c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

int wait_for(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Polls `log` until it holds `text` or `seconds` pass.
bool log_says(const std::string& log, const std::string& text, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (test::read_file(log).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

class ScopedLockPath {
 public:
  explicit ScopedLockPath(const std::string& path) { setenv("TLMC_TIMING_LOCK", path.c_str(), 1); }
  ~ScopedLockPath() { unsetenv("TLMC_TIMING_LOCK"); }
};

TEST(ParallelBuilds, ATuningProcessWaitsWhileAnotherTimes) {
  if (!ir::host_target().runs_here) GTEST_SKIP() << "tuning measures on this machine";
  test::TempDir dir;
  const ScopedLockPath path(dir.file("timing.lock"));
  const std::string log = dir.file("tune.log");
  const std::string db = dir.file("t.db");
  std::optional<toolchain::TimingLock> held;
  held.emplace();  // this process times; the lock file is made, writable by every user
  struct stat st {};
  ASSERT_EQ(stat(dir.file("timing.lock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666u);
  const pid_t tuner = start(std::string(TLMC_EXE) + " " + kMlp + " -O2 --trials 2 --tuning-db " +
                                db + " -o " + dir.file("out"),
                            log);
  ASSERT_TRUE(log_says(log,
                       "tlmc: waiting for another tlmc process to finish timing (one times at "
                       "a time on this machine; lock " +
                           dir.file("timing.lock") + ")",
                       120))
      << test::read_file(log);
  // Held a second more: it has timed nothing, nor finished.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  EXPECT_EQ(waitpid(tuner, nullptr, WNOHANG), 0) << test::read_file(log);
  EXPECT_EQ(test::read_file(log).find("tuned "), std::string::npos) << test::read_file(log);
  held.reset();
  ASSERT_EQ(wait_for(tuner), 0) << test::read_file(log);
  const std::string out = test::read_file(log);
  EXPECT_NE(out.find("s of it waiting for another tlmc's timing)"), std::string::npos) << out;
  EXPECT_EQ(out.find("waiting for another tlmc process"), out.rfind("waiting for another tlmc "
                                                                    "process"))
      << "said once";
  EXPECT_FALSE(scheduler::TuningDb::open(db, scheduler::DbAccess::Read).all().empty());
}

TEST(ParallelBuilds, ALockTlmcCannotTakeIsSaidOnceAndTuningGoesOn) {
  if (!ir::host_target().runs_here) GTEST_SKIP() << "tuning measures on this machine";
  test::TempDir dir;
  const std::string lock = dir.file("no-such-folder/timing.lock");
  const test::CommandResult r = test::run_command(
      "TLMC_TIMING_LOCK=" + lock + " " + TLMC_EXE + " " + kMlp + " -O2 --trials 2 --tuning-db " +
      dir.file("t.db") + " -o " + dir.file("out") + " 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string note = "tlmc: note: cannot take the timing lock " + lock +
                           " (No such file or directory): timing without it, so another tlmc "
                           "may time at once (set TLMC_TIMING_LOCK to a file tlmc may write)\n";
  EXPECT_NE(r.out.find(note), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(note), r.out.rfind(note)) << "said once";
  EXPECT_NE(r.out.find("tlmc: tuned 3 subgraphs"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace tlmc
