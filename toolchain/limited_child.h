// Work that may run away (a candidate kernel, Clang on a candidate's C) done in a process
// forked from tlmc under limits, so that it cannot exhaust the machine: wall time and
// resident memory are watched by the parent, which kills the child when it passes them;
// CPU time and the size of any file written are the kernel's resource limits
// (setrlimit), which end the child with SIGXCPU or SIGXFSZ. Memory is watched rather than
// limited with RLIMIT_AS or RLIMIT_DATA because a sanitizer build maps terabytes of
// shadow memory it never touches: the resident size is what exhausts a machine, and it
// is the same measure with and without sanitizers. The watch looks every 20 ms, so a
// child allocating faster than that may pass its limit by what it touches in 20 ms.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tlmc::toolchain {

// Each 0 means no limit of that kind.
struct ChildLimits {
  double wall_seconds = 0;   // from its start
  double cpu_seconds = 0;    // CPU time of all its threads, from its start
  int64_t memory_bytes = 0;  // resident memory beyond what tlmc itself had at the fork
  int64_t file_bytes = 0;    // the largest file it may write
  // What the child is doing, for the messages ("compiling", "running").
  std::string doing = "running";
};

// In a child, right after the fork: the CPU time and file size limits of `limits`, and no
// core file (a crashing candidate must not write gigabytes).
void limit_this_process(const ChildLimits& limits);
// In a child that runs generated code: a crash of that code ends the child by its signal,
// as a crash does, even where tlmc's own handlers (a sanitizer's, which reports tlmc's bugs
// and exits with status 1) are installed.
void default_crash_signals();
// Allows this process `seconds` more of CPU time from now (a long-lived child does this
// before each piece of work; 0: no limit).
void limit_cpu_from_now(double seconds);

// The resident memory of process `pid`, in bytes (0 if it cannot be read).
int64_t resident_bytes(pid_t pid);

// Waits until `fd` is readable (or closed) while watching child `pid`: Ready, or which
// limit it passed (it is then still running: the caller kills it). `memory_ceiling`: the
// resident bytes it may reach (0: unwatched).
enum class ChildWait { Ready, OverTime, OverMemory };
ChildWait wait_for_child(int fd, pid_t pid, double seconds, int64_t memory_ceiling);

// Why a child that stopped with wait status `status` stopped, naming the limit of
// `limits` it passed when a resource limit's signal ended it: "killed by signal 24 (CPU
// time limit exceeded): more than 2 s of CPU time".
std::string describe_child_end(int status, const ChildLimits& limits);
// The message for a child killed for passing `which` of `limits`.
std::string describe_limit(ChildWait which, const ChildLimits& limits);

// Each of `work` done in a child of its own, at most `parallel` at a time, under `limits`;
// each child's reply is what its function returns. Must be called when this process has
// no other thread (a child of a fork inherits only the caller's, and locks another held).
struct ChildReply {
  bool ok = false;
  std::string reply;   // ok only
  std::string why;     // not ok: how it ended, or the limit it passed
  double seconds = 0;  // from its fork to its end
};
std::vector<ChildReply> run_in_children(const std::vector<std::function<std::string()>>& work,
                                        int parallel, const ChildLimits& limits);

}  // namespace tlmc::toolchain
