// One lock per machine, held while tlmc times code (candidates in the tuner's worker, a model
// in --profile and in -O3's timing inside the model): tlmc processes that a parallel build
// starts together compile at once but time one after another, so that no measurement shares
// the cores with another's. A POSIX record lock on a file ($TLMC_TIMING_LOCK, else
// /tmp/tlmc-timing.lock): the processes tlmc forks do not inherit it, and it goes when tlmc
// exits, however it exits.
#pragma once

#include <string>

namespace tlmc::toolchain {

// The lock file: $TLMC_TIMING_LOCK when set and not empty, else /tmp/tlmc-timing.lock.
std::string timing_lock_path();

// Holds the lock from construction to destruction. When another process holds it, says so
// on stderr (once per process) and waits. A lock file tlmc cannot open or lock (a folder
// that does not exist, a file of another user that tlmc may not write) is said once, and
// timing goes on without the lock.
class TimingLock {
 public:
  TimingLock();
  ~TimingLock();
  TimingLock(const TimingLock&) = delete;
  TimingLock& operator=(const TimingLock&) = delete;

 private:
  int fd_ = -1;
};

// Seconds this process has waited for the lock in all, for the tuner's summary.
double timing_lock_waited_seconds();

}  // namespace tlmc::toolchain
