#include "toolchain/timing_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tlmc::toolchain {
namespace {

double g_waited = 0;       // seconds, over the process's life
bool g_said_wait = false;  // "waiting for ..." was said
bool g_said_fail = false;  // "cannot take the lock" was said

// A whole-file write lock; F_SETLKW waits, F_SETLK does not.
int lock_file(int fd, int command) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  int status;
  do {
    status = fcntl(fd, command, &lock);
  } while (status != 0 && errno == EINTR);
  return status;
}

}  // namespace

std::string timing_lock_path() {
  const char* named = std::getenv("TLMC_TIMING_LOCK");
  return named && *named ? named : "/tmp/tlmc-timing.lock";
}

TimingLock::TimingLock() {
  const std::string path = timing_lock_path();
  // Anyone's tlmc may take it: made writable by all (the umask narrows the mode it is
  // created with); never opened through a symbolic link.
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
  int error = errno;
  if (fd >= 0) {
    struct stat st {};
    if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 0777) != 0666)
      fchmod(fd, 0666);
    if (lock_file(fd, F_SETLK) == 0) {
      fd_ = fd;
      return;
    }
    error = errno;
    if (error == EACCES || error == EAGAIN) {  // another process holds it
      if (!g_said_wait)
        std::fprintf(stderr,
                     "tlmc: waiting for another tlmc process to finish timing (one times at a "
                     "time on this machine; lock %s)\n",
                     path.c_str());
      g_said_wait = true;
      const auto t0 = std::chrono::steady_clock::now();
      const int status = lock_file(fd, F_SETLKW);
      error = errno;
      g_waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (status == 0) {
        fd_ = fd;
        return;
      }
    }
    close(fd);
  }
  if (!g_said_fail)
    std::fprintf(stderr,
                 "tlmc: note: cannot take the timing lock %s (%s): timing without it, so "
                 "another tlmc may time at once (set TLMC_TIMING_LOCK to a file tlmc may "
                 "write)\n",
                 path.c_str(), std::strerror(error));
  g_said_fail = true;
}

TimingLock::~TimingLock() {
  if (fd_ >= 0) close(fd_);  // releases the lock
}

double timing_lock_waited_seconds() { return g_waited; }

}  // namespace tlmc::toolchain
