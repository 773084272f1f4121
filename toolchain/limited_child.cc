#include "toolchain/limited_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "ir/diagnostic.h"

namespace tlmc::toolchain {
namespace {

using Clock = std::chrono::steady_clock;

// How often the parent looks at a child's time and memory.
constexpr int kWatchMilliseconds = 20;

rlim_t whole_seconds(double seconds) { return static_cast<rlim_t>(std::ceil(seconds)); }

std::string mib(int64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

std::string seconds_text(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g s", s);
  return buffer;
}

double cpu_seconds_used() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

bool write_all(int fd, const std::string& data) {
  for (size_t done = 0; done < data.size();) {
    const ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

void limit_this_process(const ChildLimits& limits) {
  const rlimit no_core{0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  if (limits.cpu_seconds > 0) {
    // A child's CPU time starts at zero. SIGXCPU at the soft limit; should it be caught,
    // SIGKILL a second later at the hard one.
    const rlim_t soft = whole_seconds(limits.cpu_seconds);
    rlimit cpu{soft, soft + 1};
    rlimit now{};
    if (getrlimit(RLIMIT_CPU, &now) == 0 && now.rlim_max != RLIM_INFINITY)
      cpu = {std::min(soft, now.rlim_max), now.rlim_max};
    setrlimit(RLIMIT_CPU, &cpu);
  }
  if (limits.file_bytes > 0) {
    rlimit now{};
    getrlimit(RLIMIT_FSIZE, &now);
    const auto bytes = static_cast<rlim_t>(limits.file_bytes);
    const rlimit size{std::min(bytes, now.rlim_max), std::min(bytes, now.rlim_max)};
    setrlimit(RLIMIT_FSIZE, &size);
  }
}

void default_crash_signals() {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, SIG_DFL);
}

void limit_cpu_from_now(double seconds) {
  rlimit now{};
  if (getrlimit(RLIMIT_CPU, &now) != 0) return;
  // The soft limit only: a long-lived process raises it again before its next work.
  now.rlim_cur = seconds > 0 ? std::min(whole_seconds(cpu_seconds_used() + seconds), now.rlim_max)
                             : now.rlim_max;
  setrlimit(RLIMIT_CPU, &now);
}

int64_t resident_bytes(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/statm", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  long long size = 0, resident = 0;
  const int got = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  return got == 2 ? resident * sysconf(_SC_PAGESIZE) : 0;
}

ChildWait wait_for_child(int fd, pid_t pid, double seconds, int64_t memory_ceiling) {
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(std::max(seconds, 0.0)));
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const int slice = static_cast<int>(std::clamp<int64_t>(left.count(), 0, kWatchMilliseconds));
    const int ready = poll(&p, 1, slice);
    if (ready > 0) return ChildWait::Ready;
    if (ready < 0 && errno != EINTR) return ChildWait::Ready;  // the read that follows fails
    if (memory_ceiling > 0 && resident_bytes(pid) > memory_ceiling) return ChildWait::OverMemory;
    if (Clock::now() >= deadline) return ChildWait::OverTime;
  }
}

std::string describe_child_end(int status, const ChildLimits& limits) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (!WIFSIGNALED(status)) return "stopped";
  const int sig = WTERMSIG(status);
  std::string out = "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  if (sig == SIGXCPU) out += ": more than " + seconds_text(limits.cpu_seconds) + " of CPU time";
  if (sig == SIGXFSZ) out += ": it wrote a file of more than " + mib(limits.file_bytes);
  return out;
}

std::string describe_limit(ChildWait which, const ChildLimits& limits) {
  if (which == ChildWait::OverMemory)
    return "killed while " + limits.doing + ": it used more than " + mib(limits.memory_bytes) +
           " of memory beyond tlmc's own";
  return "still " + limits.doing + " after " + seconds_text(limits.wall_seconds);
}

std::vector<ChildReply> run_in_children(const std::vector<std::function<std::string()>>& work,
                                        int parallel, const ChildLimits& limits) {
  struct Running {
    size_t index;
    pid_t pid;
    int fd;
    Clock::time_point start;
    std::string reply;
  };
  std::vector<ChildReply> out(work.size());
  std::vector<Running> running;
  const int64_t ceiling =
      limits.memory_bytes > 0 ? resident_bytes(getpid()) + limits.memory_bytes : 0;
  auto finish = [&](Running& r, const std::string& killed_why) {
    close(r.fd);
    if (!killed_why.empty()) kill(r.pid, SIGKILL);
    int status = 0;
    while (waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
    }
    ChildReply& c = out[r.index];
    c.seconds = std::chrono::duration<double>(Clock::now() - r.start).count();
    if (!killed_why.empty()) {
      c.why = killed_why;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      c.ok = true;
      c.reply = std::move(r.reply);
    } else {
      c.why = "failed while " + limits.doing + ": " + describe_child_end(status, limits);
    }
  };
  size_t next = 0;
  while (next < work.size() || !running.empty()) {
    while (next < work.size() && static_cast<int>(running.size()) < std::max(parallel, 1)) {
      int fds[2];
      if (pipe2(fds, O_CLOEXEC) != 0)
        throw InternalError("cannot create a pipe to a child: " +
                            std::string(std::strerror(errno)));
      const pid_t pid = fork();
      if (pid < 0) throw InternalError("cannot fork a child: " + std::string(std::strerror(errno)));
      if (pid == 0) {
        close(fds[0]);
        limit_this_process(limits);
        int code = 0;
        try {
          code = write_all(fds[1], work[next]()) ? 0 : 2;
        } catch (...) {
          code = 3;
        }
        _exit(code);
      }
      close(fds[1]);
      running.push_back({next++, pid, fds[0], Clock::now(), {}});
    }
    std::vector<pollfd> polls;
    for (const Running& r : running) polls.push_back({r.fd, POLLIN, 0});
    const int ready = poll(polls.data(), polls.size(), kWatchMilliseconds);
    if (ready < 0 && errno != EINTR)
      throw InternalError("poll on children: " + std::string(std::strerror(errno)));
    std::vector<bool> done(running.size(), false);
    for (size_t i = 0; i < running.size(); ++i) {
      Running& r = running[i];
      if (ready > 0 && (polls[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        char buffer[65536];
        const ssize_t n = read(r.fd, buffer, sizeof buffer);
        if (n > 0) {
          r.reply.append(buffer, static_cast<size_t>(n));
        } else if (n == 0 || errno != EINTR) {
          finish(r, "");
          done[i] = true;
          continue;
        }
      }
      if (ceiling > 0 && resident_bytes(r.pid) > ceiling) {
        finish(r, describe_limit(ChildWait::OverMemory, limits));
        done[i] = true;
      } else if (limits.wall_seconds > 0 &&
                 std::chrono::duration<double>(Clock::now() - r.start).count() >
                     limits.wall_seconds) {
        finish(r, describe_limit(ChildWait::OverTime, limits));
        done[i] = true;
      }
    }
    std::vector<Running> still;
    for (size_t i = 0; i < running.size(); ++i)
      if (!done[i]) still.push_back(std::move(running[i]));
    running = std::move(still);
  }
  return out;
}

}  // namespace tlmc::toolchain
