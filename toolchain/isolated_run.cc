#include "toolchain/isolated_run.h"

#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

#include "toolchain/limited_child.h"

namespace tlmc::toolchain {
namespace {

struct SharedHeader {
  int status;  // 0 ok; else a child-side failure code
  char message[256];
  int timing_runs;
  double median_seconds;
};

[[noreturn]] void child_fail(SharedHeader* h, const std::string& why) {
  h->status = 1;
  std::snprintf(h->message, sizeof h->message, "%s", why.c_str());
  _exit(0);
}

// Runs at most this many times, whatever min_timing_seconds asks.
constexpr int kMaxTimingRuns = 10000;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Per entry of `bytes`, the median over `runs` of NAME_profile_copy moving that many bytes
// between two buffers of their own, the copies of the distinct sizes taking turns (a
// model's repeated layers ask for one size many times: it is timed once).
void time_copies(SharedHeader* h, void* handle, const std::string& name,
                 const std::vector<size_t>& bytes, int runs, double* copy_area) {
  using CopyFn = void (*)(void*, const void*, size_t);
  auto copy = reinterpret_cast<CopyFn>(dlsym(handle, (name + "_profile_copy").c_str()));
  if (!copy) child_fail(h, "the library was not built to profile: no " + name + "_profile_copy");
  const size_t most = (*std::max_element(bytes.begin(), bytes.end()) + 63) / 64 * 64;
  if (most == 0) return;
  // Half a page apart: buffers at one offset in their pages stall a copy on false
  // dependences between its loads and stores (4K aliasing).
  auto* src = static_cast<uint8_t*>(std::aligned_alloc(64, most));
  auto* dst_area = static_cast<uint8_t*>(std::aligned_alloc(64, most + 2048));
  if (!src || !dst_area) child_fail(h, "cannot allocate the copy buffers");
  uint8_t* dst = dst_area + 2048;
  std::memset(src, 1, most);
  std::memset(dst, 0, most);
  std::map<size_t, std::vector<double>> times;
  for (size_t b : bytes) times[b];
  for (int r = 0; r < std::max(1, runs); ++r)
    for (auto& [size, t] : times) {
      const auto t0 = std::chrono::steady_clock::now();
      copy(dst, src, size);
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
  for (size_t c = 0; c < bytes.size(); ++c) copy_area[c] = median(times.at(bytes[c]));
  std::free(src);
  std::free(dst_area);
}

void run_child(SharedHeader* h, uint8_t* out_area, double* call_area, double* copy_area,
               const std::string& lib, const std::string& name,
               const std::vector<std::vector<uint8_t>>& inputs,
               const std::vector<size_t>& output_bytes, int timing_runs, double min_seconds,
               int profile_calls, const std::vector<size_t>& copy_bytes) {
  void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) child_fail(h, std::string("cannot load the library: ") + dlerror());
  using RunFn = int (*)(const void* const*, void* const*, void*);
  using SizeFn = size_t (*)(void);
  auto run = reinterpret_cast<RunFn>(dlsym(handle, (name + "_run").c_str()));
  auto size = reinterpret_cast<SizeFn>(dlsym(handle, (name + "_workspace_size").c_str()));
  if (!run || !size) child_fail(h, "the library does not export " + name + "_run");
  using ProfileFn = int (*)(double*);
  ProfileFn profile = nullptr;
  if (profile_calls > 0) {
    profile = reinterpret_cast<ProfileFn>(dlsym(handle, (name + "_profile_read").c_str()));
    if (!profile)
      child_fail(h, "the library was not built to profile: no " + name + "_profile_read");
  }
  std::vector<double> calls(static_cast<size_t>(std::max(profile_calls, 0)));
  std::vector<std::vector<double>> call_times(calls.size());
  const size_t ws_bytes = size();
  void* ws = ws_bytes ? std::aligned_alloc(64, (ws_bytes + 63) / 64 * 64) : nullptr;
  std::vector<const void*> in;
  for (const auto& i : inputs) in.push_back(i.data());
  std::vector<void*> out;
  size_t offset = 0;
  for (size_t b : output_bytes) {
    out.push_back(out_area + offset);
    offset += b;
  }
  const int rc = run(in.data(), out.data(), ws);
  if (rc != 0) child_fail(h, name + "_run returned " + std::to_string(rc));
  if (profile && profile(calls.data()) != profile_calls)
    child_fail(h, "the library's profile has another number of calls");
  std::vector<double> times;
  double total = 0;
  while (static_cast<int>(times.size()) < kMaxTimingRuns &&
         (static_cast<int>(times.size()) < timing_runs || total < min_seconds)) {
    const auto t0 = std::chrono::steady_clock::now();
    run(in.data(), out.data(), ws);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    total += times.back();
    if (!profile) continue;
    profile(calls.data());
    for (size_t c = 0; c < calls.size(); ++c) call_times[c].push_back(calls[c]);
  }
  h->timing_runs = static_cast<int>(times.size());
  if (!times.empty()) h->median_seconds = median(times);
  for (size_t c = 0; c < calls.size() && !times.empty(); ++c) call_area[c] = median(call_times[c]);
  if (!copy_bytes.empty())
    time_copies(h, handle, name, copy_bytes, std::min<int>(kMaxCopyRuns, h->timing_runs),
                copy_area);
  h->status = 0;
  _exit(0);
}

}  // namespace

IsolatedRun run_isolated(const std::string& shared_library, const std::string& model_name,
                         const std::vector<std::vector<uint8_t>>& inputs,
                         const std::vector<size_t>& output_bytes, int timeout_seconds,
                         int timing_runs, double min_timing_seconds, int profile_calls,
                         const std::vector<size_t>& copy_bytes) {
  IsolatedRun result;
  size_t total = 0;
  for (size_t b : output_bytes) total += b;
  const size_t calls = static_cast<size_t>(std::max(profile_calls, 0));
  const size_t copies = copy_bytes.size();
  const size_t bytes = sizeof(SharedHeader) + 64 + total + 64 + (calls + copies) * sizeof(double);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    result.message = "cannot map shared memory";
    return result;
  }
  auto* header = static_cast<SharedHeader*>(mem);
  header->status = 2;  // not reached the end
  uint8_t* out_area = static_cast<uint8_t*>(mem) + (sizeof(SharedHeader) + 63) / 64 * 64;
  auto* call_area = reinterpret_cast<double*>(out_area + (total + 63) / 64 * 64);
  double* copy_area = call_area + calls;
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    munmap(mem, bytes);
    result.message = "cannot fork";
    return result;
  }
  if (pid == 0) {
    toolchain::default_crash_signals();
    alarm(static_cast<unsigned>(timeout_seconds));
    run_child(header, out_area, call_area, copy_area, shared_library, model_name, inputs,
              output_bytes, timing_runs, min_timing_seconds, profile_calls, copy_bytes);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    result.status = sig == SIGALRM ? IsolatedRun::TimedOut : IsolatedRun::Crashed;
    result.message = sig == SIGALRM ? "timed out after " + std::to_string(timeout_seconds) + " s"
                                    : std::string("crashed: ") + strsignal(sig);
  } else if (header->status != 0) {
    result.status = IsolatedRun::Failed;
    result.message = header->status == 2 ? "exited early" : header->message;
  } else {
    result.status = IsolatedRun::Ok;
    result.timing_runs = header->timing_runs;
    result.median_seconds = header->median_seconds;
    result.call_seconds.assign(call_area, call_area + calls);
    result.copy_seconds.assign(copy_area, copy_area + copies);
    size_t offset = 0;
    for (size_t b : output_bytes) {
      result.outputs.emplace_back(out_area + offset, out_area + offset + b);
      offset += b;
    }
  }
  munmap(mem, bytes);
  return result;
}

}  // namespace tlmc::toolchain
