#include "tune/measurer.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <utility>

#include "codegen/emit_measurement.h"
#include "ir/diagnostic.h"
#include "reference/kernels.h"
#include "scheduler/lower_schedule.h"
#include "toolchain/clang_in_process.h"
#include "toolchain/limited_child.h"
#include "toolchain/loaded_object.h"
#include "toolchain/nvrtc.h"
#include "toolchain/timing_lock.h"
#include "tune/gpu_candidate.h"
#include "tune/gpu_estimate_search.h"
#include "tune/weight_eviction.h"

namespace tlmc::tune {
namespace {

using Clock = std::chrono::steady_clock;
using scheduler::MeasureStatus;

// A new CUDA worker's allowance for starting the driver and a context on the GPU, beside
// the candidate's time limit.
constexpr double kCudaWorkerStartSeconds = 10;

// An element passes when |got - want| <= kAtol + kRtol * |want| (as tlmc --check).
constexpr double kAtol = 1e-4;
constexpr double kRtol = 1e-3;

// A request is this, then the object's bytes (a CUDA target's: the cubin), then
// `packing_words` int64s: per kernel input, -1 for the model's layout, else the rank, the
// extents, the source strides, the source offset, and the count and values of the source
// limits of its Packing; then, for a CUDA target, `launch_bytes` of the launches' text
// (gpu_candidate.h).
struct Request {
  uint64_t object_bytes;
  int64_t scratch_bytes;
  uint64_t packing_words;
  uint64_t launch_bytes;
  double slow_seconds;  // Measurer::set_slow_cut
  double cpu_seconds;   // the CPU time the candidate may use (0: unlimited)
};

std::vector<int64_t> encode_packings(const std::vector<std::optional<ir::Packing>>& packings) {
  std::vector<int64_t> out;
  for (const std::optional<ir::Packing>& p : packings) {
    if (!p) {
      out.push_back(-1);
      continue;
    }
    out.push_back(static_cast<int64_t>(p->extents.size()));
    out.insert(out.end(), p->extents.begin(), p->extents.end());
    out.insert(out.end(), p->source_strides.begin(), p->source_strides.end());
    out.push_back(p->source_offset);
    out.push_back(static_cast<int64_t>(p->source_limits.size()));
    out.insert(out.end(), p->source_limits.begin(), p->source_limits.end());
    out.push_back(static_cast<int64_t>(p->zero_weights.size()));
    out.insert(out.end(), p->zero_weights.begin(), p->zero_weights.end());
    out.push_back(p->zero_from);
  }
  return out;
}

std::vector<std::optional<ir::Packing>> decode_packings(const std::vector<int64_t>& words) {
  std::vector<std::optional<ir::Packing>> out;
  for (size_t i = 0; i < words.size();) {
    const int64_t rank = words[i++];
    if (rank < 0) {
      out.emplace_back();
      continue;
    }
    const auto r = static_cast<size_t>(rank);
    TLMC_ASSERT(i + 2 * r + 1 <= words.size(), "truncated packing");
    ir::Packing p;
    p.extents.assign(words.begin() + static_cast<long>(i),
                     words.begin() + static_cast<long>(i + r));
    p.source_strides.assign(words.begin() + static_cast<long>(i + r),
                            words.begin() + static_cast<long>(i + 2 * r));
    p.source_offset = words[i + 2 * r];
    i += 2 * r + 1;
    TLMC_ASSERT(i < words.size(), "truncated packing");
    const auto limits = static_cast<size_t>(words[i++]);
    TLMC_ASSERT(i + limits <= words.size(), "truncated packing");
    p.source_limits.assign(words.begin() + static_cast<long>(i),
                           words.begin() + static_cast<long>(i + limits));
    i += limits;
    TLMC_ASSERT(i < words.size(), "truncated packing");
    const auto weights = static_cast<size_t>(words[i++]);
    TLMC_ASSERT(i + weights + 1 <= words.size(), "truncated packing");
    p.zero_weights.assign(words.begin() + static_cast<long>(i),
                          words.begin() + static_cast<long>(i + weights));
    p.zero_from = words[i + weights];
    i += weights + 1;
    out.push_back(std::move(p));
  }
  return out;
}

struct Reply {
  int32_t status;        // MeasureStatus
  int32_t worker_exits;  // the worker stops after this reply (a CUDA context was lost)
  int32_t environment;   // MeasureResult::environment
  double seconds;
  double evict_seconds;   // MeasureResult::evict_seconds
  int64_t evicted_bytes;  // MeasureResult::evicted_bytes
  char reason[480];
};

bool write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool read_all(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

Reply reply(MeasureStatus status, double seconds, const std::string& reason,
            bool worker_exits = false, double evict_seconds = 0, int64_t evicted_bytes = 0) {
  Reply r{};
  r.status = static_cast<int32_t>(status);
  r.worker_exits = worker_exits ? 1 : 0;
  r.seconds = seconds;
  r.evict_seconds = evict_seconds;
  r.evicted_bytes = evicted_bytes;
  std::snprintf(r.reason, sizeof r.reason, "%s", reason.c_str());
  return r;
}

bool agrees(double got, double want, double rtol = kRtol) {
  return (std::isnan(got) && std::isnan(want)) || got == want ||
         std::fabs(got - want) <= kAtol + rtol * std::fabs(want);
}

// A float16 or bfloat16 result: the kernel rounds its float32 value, the reference its
// double one, so the two may lie one unit in the last place apart (2^-7 or 2^-10 of it).
std::string first_half_mismatch(const reference::HostTensor& got,
                                const reference::HostTensor& want) {
  const ir::DType t = want.type.dtype;
  const double rtol = kRtol + ir::half_last_place(t);
  const auto* gp = got.as<uint16_t>();
  const auto* wp = want.as<uint16_t>();
  for (int64_t i = 0; i < want.type.numel(); ++i) {
    const double g = ir::sixteen_bit_to_float(t, gp[i]);
    const double w = ir::sixteen_bit_to_float(t, wp[i]);
    if (!agrees(g, w, rtol))
      return "element " + std::to_string(i) + ": got " + std::to_string(g) + ", want " +
             std::to_string(w);
  }
  return "";
}

// The first element that differs from the reference, described; empty when all agree.
std::string first_mismatch(const std::vector<reference::HostTensor>& got,
                           const std::vector<reference::HostTensor>& want) {
  for (size_t o = 0; o < want.size(); ++o) {
    if (ir::dtype_is_half(want[o].type.dtype)) {
      const std::string bad = first_half_mismatch(got[o], want[o]);
      if (!bad.empty()) return "output " + std::to_string(o) + " " + bad;
      continue;
    }
    const int64_t n = want[o].type.numel();
    int64_t bad = -1;
    double g = 0, w = 0;
    // One dispatch on the dtype per output, not per element: this runs for every candidate.
    reference::with_element_type(want[o].type.dtype, [&](auto zero) {
      using T = decltype(zero);
      const T* gp = got[o].as<T>();
      const T* wp = want[o].as<T>();
      for (int64_t i = 0; i < n; ++i) {
        if (agrees(static_cast<double>(gp[i]), static_cast<double>(wp[i]))) continue;
        bad = i;
        g = static_cast<double>(gp[i]);
        w = static_cast<double>(wp[i]);
        return;
      }
    });
    if (bad >= 0)
      return "output " + std::to_string(o) + " element " + std::to_string(bad) + ": got " +
             std::to_string(g) + ", want " + std::to_string(w);
  }
  return "";
}

// The CPUs the worker may run on, read when it starts (before it pins any thread).
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// Pins each thread of the worker to a CPU of its own (round-robin over `cpus`): its main
// thread, then the candidate's pool by thread id. Left to the scheduler, both threads of a
// 2-core measurement at times shared one CPU for a whole candidate, doubling its time.
void pin_threads(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  std::vector<pid_t> threads;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    const pid_t tid = static_cast<pid_t>(std::atol(e.path().filename().c_str()));
    if (tid > 0 && tid != getpid()) threads.push_back(tid);
  }
  std::sort(threads.begin(), threads.end());
  threads.insert(threads.begin(), getpid());
  for (size_t i = 0; i < threads.size(); ++i) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[i % cpus.size()], &one);
    sched_setaffinity(threads[i], sizeof one, &one);  // a thread gone meanwhile: no matter
  }
}

// The task's inputs as the candidate takes them: each in its packing, where it has one.
std::vector<reference::HostTensor> packed_inputs(
    const MeasureTask& task, const std::vector<std::optional<ir::Packing>>& input_packings) {
  std::vector<reference::HostTensor> inputs = task.inputs;
  for (size_t i = 0; i < inputs.size() && i < input_packings.size(); ++i)
    if (const std::optional<ir::Packing>& packing = input_packings[i])
      inputs[i].bytes =
          ir::pack_bytes(*packing, inputs[i].bytes, ir::dtype_size(inputs[i].type.dtype));
  return inputs;
}

// One CUDA candidate, inside the worker: on the GPU (gpu_candidate.h).
Reply run_cuda_candidate(const MeasureTask& task, const MeasureOptions& options, const Request& req,
                         const std::string& cubin,
                         const std::vector<std::optional<ir::Packing>>& input_packings,
                         const std::string& launches) {
  GpuRunOptions o;
  o.min_seconds = options.min_seconds;
  o.repeats = options.repeats;
  o.slow_seconds = req.slow_seconds;
  const GpuCandidateResult r = run_on_gpu(packed_inputs(task, input_packings), task.expected, cubin,
                                          decode_launches(launches), req.scratch_bytes, o,
                                          [&](const std::vector<reference::HostTensor>& got) {
                                            return first_mismatch(got, task.expected);
                                          });
  Reply out = reply(r.status, r.seconds, r.reason, r.context_lost);
  out.environment = r.environment ? 1 : 0;
  return out;
}

// What the kernels of one task read of its weights, per packing of them (the words that
// encode the packings): every correct candidate computes the same function, so reads the
// same elements; learnt from the first candidate of each packing (weight_eviction.h).
using ReadsByPacking = std::map<std::vector<int64_t>, ReadRanges>;

// One candidate, inside the worker.
Reply run_candidate(const MeasureTask& task, const MeasureOptions& options, int threads,
                    const std::vector<int>& cpus, const Request& req, const std::string& object,
                    const std::vector<int64_t>& packing_words, ReadsByPacking& reads) {
  const std::vector<std::optional<ir::Packing>> input_packings = decode_packings(packing_words);
  std::string error;
  std::unique_ptr<toolchain::LoadedObject> loaded = toolchain::LoadedObject::load(object, &error);
  if (!loaded) return reply(MeasureStatus::CompileError, 0, "cannot load the object: " + error);
  using RunFn = void (*)(void* const*, char*);
  auto run = reinterpret_cast<RunFn>(loaded->symbol("tlmc_measure_run", &error));
  auto set_threads =
      reinterpret_cast<void (*)(int)>(loaded->symbol("tlmc_measure_threads", &error));
  auto shutdown = reinterpret_cast<void (*)()>(loaded->symbol("tlmc_measure_shutdown", &error));
  if (!run || !set_threads || !shutdown)
    return reply(MeasureStatus::CompileError, 0, "the object lacks a measurement entry: " + error);
  set_threads(threads);
  // Fresh copies: a candidate writing into its inputs cannot spoil the next one's. Outputs
  // start as all-ones bytes (NaN for floats), so an element never written is caught.
  std::vector<reference::HostTensor> inputs = packed_inputs(task, input_packings),
                                     outputs = task.expected;
  for (reference::HostTensor& o : outputs) std::fill(o.bytes.begin(), o.bytes.end(), 0xff);
  std::vector<void*> params;
  for (reference::HostTensor& t : inputs) params.push_back(t.bytes.data());
  for (reference::HostTensor& t : outputs) params.push_back(t.bytes.data());
  const size_t scratch_size =
      static_cast<size_t>((std::max<int64_t>(req.scratch_bytes, 64) + 63) / 64 * 64);
  std::unique_ptr<char, decltype(&std::free)> scratch(
      static_cast<char*>(std::aligned_alloc(64, scratch_size)), &std::free);

  run(params.data(), scratch.get());
  const std::string mismatch = first_mismatch(outputs, task.expected);
  if (!mismatch.empty()) {
    shutdown();
    return reply(MeasureStatus::WrongResult, 0, mismatch);
  }
  // The pool's threads exist now. Once pinned, one more run untimed: the check ran all
  // threads on the main thread's CPU (new threads inherit its pinning), so a first timed
  // run would pay for moving threads and their data to their own CPUs (and the slow cut
  // judges a candidate by that run).
  pin_threads(cpus);
  std::vector<std::pair<const char*, size_t>> weights;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (task.program.tensor(task.program.inputs[i]).constant)
      weights.emplace_back(reinterpret_cast<const char*>(inputs[i].bytes.data()),
                           inputs[i].bytes.size());
  const bool cold = options.cold_weights && !weights.empty();
  auto known = reads.find(packing_words);
  if (cold && known == reads.end()) {  // this run also learns what the kernel reads
    known = reads
                .emplace(packing_words,
                         learn_reads(weights, [&] { run(params.data(), scratch.get()); }))
                .first;
  } else {
    run(params.data(), scratch.get());
  }
  // Then repeats of n runs lasting min_seconds each; with cold weights, each run timed
  // alone after what it reads of the weights left the caches, and n counted by the cost
  // of both (a kernel of microseconds that reads a few rows of a 94 MB table must not be
  // run thousands of times, each after evicting the table).
  double evict_seconds = 0;
  auto seconds_of = [&](int64_t n) {
    if (!cold) {
      const Clock::time_point t0 = Clock::now();
      for (int64_t i = 0; i < n; ++i) run(params.data(), scratch.get());
      return std::chrono::duration<double>(Clock::now() - t0).count() / static_cast<double>(n);
    }
    double total = 0, evicting = 0;
    for (int64_t i = 0; i < n; ++i) {
      const Clock::time_point e0 = Clock::now();
      evict(weights, known->second);
      const Clock::time_point t0 = Clock::now();
      run(params.data(), scratch.get());
      total += std::chrono::duration<double>(Clock::now() - t0).count();
      evicting += std::chrono::duration<double>(t0 - e0).count();
    }
    evict_seconds = evicting / static_cast<double>(n);
    return total / static_cast<double>(n);
  };
  const double once = std::max(seconds_of(1), 1e-9);
  const int64_t evicted = cold ? static_cast<int64_t>(read_bytes(known->second)) : 0;
  if (req.slow_seconds > 0 && once > req.slow_seconds) {
    shutdown();
    return reply(MeasureStatus::Ok, once, "", false, evict_seconds, evicted);
  }
  const int64_t n = std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(options.min_seconds / (once + evict_seconds))));
  std::vector<double> times;
  for (int r = 0; r < std::max(1, options.repeats); ++r) times.push_back(seconds_of(n));
  std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
  shutdown();
  return reply(MeasureStatus::Ok, times[times.size() / 2], "", false, evict_seconds, evicted);
}

// The worker's loop; a CUDA target's worker is the only process of tlmc's that initialises
// CUDA (its parent never does: it forks workers).
[[noreturn]] void worker_main(int fd, const MeasureTask& task, const MeasureOptions& options,
                              int threads, bool cuda) {
  toolchain::ChildLimits limits;
  limits.file_bytes = options.file_bytes;
  toolchain::limit_this_process(limits);
  toolchain::default_crash_signals();
  const std::vector<int> cpus = allowed_cpus();
  ReadsByPacking reads;
  for (;;) {
    Request req{};
    if (!read_all(fd, &req, sizeof req)) _exit(0);
    std::string object(req.object_bytes, '\0');
    if (!read_all(fd, object.data(), object.size())) _exit(0);
    std::vector<int64_t> words(req.packing_words);
    if (!read_all(fd, words.data(), words.size() * sizeof(int64_t))) _exit(0);
    std::string launches(req.launch_bytes, '\0');
    if (!read_all(fd, launches.data(), launches.size())) _exit(0);
    toolchain::limit_cpu_from_now(req.cpu_seconds);
    const Reply r =
        cuda ? run_cuda_candidate(task, options, req, object, decode_packings(words), launches)
             : run_candidate(task, options, threads, cpus, req, object, words, reads);
    if (!write_all(fd, &r, sizeof r) || r.worker_exits) _exit(0);
  }
}

int64_t task_bytes(const MeasureTask& task) {
  int64_t bytes = 0;
  for (const reference::HostTensor& t : task.inputs) bytes += static_cast<int64_t>(t.bytes.size());
  for (const reference::HostTensor& t : task.expected)
    bytes += static_cast<int64_t>(t.bytes.size());
  return bytes;
}

}  // namespace

Measurer::Measurer(const MeasureTask& task, const ir::Target& target, MeasureOptions options)
    : task_(task), target_(target), options_(options) {
  if (options_.threads <= 0) options_.threads = target_.cores;
}

Measurer::~Measurer() { stop_worker(); }

int64_t Measurer::run_memory_bytes() const {
  return options_.run_memory_bytes > 0 ? options_.run_memory_bytes
                                       : (int64_t{2} << 30) + 4 * task_bytes(task_);
}

void Measurer::start_worker() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw InternalError("cannot create the measurement worker's socket");
  const pid_t pid = fork();
  if (pid < 0) throw InternalError("cannot start the measurement worker (fork failed)");
  if (pid == 0) {
    close(fds[0]);
    worker_main(fds[1], task_, options_, options_.threads, target_.is_cuda());
  }
  worker_baseline_ = toolchain::resident_bytes(getpid());
  close(fds[1]);
  worker_ = pid;
  socket_ = fds[0];
  ++workers_started_;
}

void Measurer::stop_worker() {
  if (worker_ <= 0) return;
  close(socket_);  // the worker reads end-of-file and exits
  int status = 0;
  if (waitpid(worker_, &status, WNOHANG) == 0) {
    kill(worker_, SIGKILL);
    waitpid(worker_, &status, 0);
  }
  worker_ = -1;
  socket_ = -1;
}

MeasureResult Measurer::run_in_worker(const std::string& object, int64_t scratch_bytes,
                                      const std::vector<std::optional<ir::Packing>>& packings,
                                      const std::string& launches) {
  // One tlmc times at a time on this machine (toolchain/timing_lock.h), candidate by
  // candidate: processes of a parallel build interleave their candidates, never overlap.
  const toolchain::TimingLock lock;
  // A new CUDA worker first loads the driver and creates a context: seconds, not the
  // candidate's.
  const double start_seconds = worker_ <= 0 && target_.is_cuda() ? kCudaWorkerStartSeconds : 0;
  if (worker_ <= 0) start_worker();
  const std::vector<int64_t> words = encode_packings(packings);
  toolchain::ChildLimits limits;
  limits.wall_seconds = options_.timeout_seconds + start_seconds;
  limits.cpu_seconds = options_.run_cpu_seconds > 0
                           ? options_.run_cpu_seconds
                           : std::max(options_.threads, 1) * limits.wall_seconds + 1;
  limits.memory_bytes = run_memory_bytes() + std::max<int64_t>(scratch_bytes, 0);
  limits.file_bytes = options_.file_bytes;
  const Request req{object.size(),   scratch_bytes, words.size(),
                    launches.size(), slow_seconds_, limits.cpu_seconds};
  MeasureResult out;
  if (!write_all(socket_, &req, sizeof req) || !write_all(socket_, object.data(), object.size()) ||
      !write_all(socket_, words.data(), words.size() * sizeof(int64_t)) ||
      !write_all(socket_, launches.data(), launches.size())) {
    stop_worker();
    out.status = MeasureStatus::Crashed;
    out.reason = "the measurement worker stopped before the candidate was sent";
    return out;
  }
  const toolchain::ChildWait waited = toolchain::wait_for_child(
      socket_, worker_, limits.wall_seconds, worker_baseline_ + limits.memory_bytes);
  Reply r{};
  if (waited != toolchain::ChildWait::Ready) {
    kill(worker_, SIGKILL);
    stop_worker();
    out.status =
        waited == toolchain::ChildWait::OverTime ? MeasureStatus::TimedOut : MeasureStatus::Crashed;
    out.reason = toolchain::describe_limit(waited, limits);
    return out;
  }
  if (!read_all(socket_, &r, sizeof r)) {
    int status = 0;
    waitpid(worker_, &status, 0);
    worker_ = -1;
    close(socket_);
    socket_ = -1;
    out.status = MeasureStatus::Crashed;
    out.reason = "the candidate's run " + toolchain::describe_child_end(status, limits);
    return out;
  }
  if (r.worker_exits) stop_worker();
  out.environment = r.environment != 0;
  out.status = static_cast<MeasureStatus>(r.status);
  out.seconds = r.seconds;
  out.evict_seconds = r.evict_seconds;
  out.evicted_bytes = r.evicted_bytes;
  r.reason[sizeof r.reason - 1] = 0;
  out.reason = r.reason;
  return out;
}

namespace {

// A compiled object through a child's pipe: '1' (compiled) or '0', the diagnostics'
// length in 20 digits, the diagnostics, then the object.
constexpr size_t kLengthDigits = 20;

std::string encode_object(const toolchain::InProcessObject& o) {
  char length[kLengthDigits + 1];
  std::snprintf(length, sizeof length, "%020zu", o.diagnostics.size());
  return (o.ok ? "1" : "0") + std::string(length) + o.diagnostics + o.object;
}

toolchain::InProcessObject decode_object(const std::string& reply) {
  toolchain::InProcessObject o;
  const size_t length = reply.size() > kLengthDigits
                            ? std::strtoull(reply.substr(1, kLengthDigits).c_str(), nullptr, 10)
                            : reply.size();
  if (reply.size() < 1 + kLengthDigits + length) {
    o.diagnostics = "a truncated reply from the compiling child";
    return o;
  }
  o.ok = reply[0] == '1';
  o.diagnostics = reply.substr(1 + kLengthDigits, length);
  o.object = reply.substr(1 + kLengthDigits + length);
  return o;
}

// Each candidate's C compiled in a child process of its own, `jobs` at a time, under the
// compile limits of `options`; one that is too long is refused unread. Called while this
// process has no other thread (it forks).
struct CompiledCandidate {
  toolchain::InProcessObject object;
  double seconds = 0;  // its compilation's wall time, its child's start included
};

std::vector<CompiledCandidate> compile_candidates(const std::vector<std::string>& sources,
                                                  const ir::Target& target,
                                                  const MeasureOptions& options, int jobs) {
  std::vector<CompiledCandidate> out(sources.size());
  std::vector<std::function<std::string()>> work;
  std::vector<size_t> compiled;
  const std::vector<std::string> flags = toolchain::generated_code_flags(target);
  for (size_t i = 0; i < sources.size(); ++i) {
    if (sources[i].size() > options.max_source_bytes) {
      out[i].object.diagnostics = "the candidate's C is " + std::to_string(sources[i].size()) +
                                  " bytes, more than " + std::to_string(options.max_source_bytes) +
                                  ": not compiled";
      continue;
    }
    compiled.push_back(i);
    work.emplace_back([&sources, &flags, i] {
      return encode_object(toolchain::compile_c_in_process(sources[i], flags));
    });
  }
  toolchain::ChildLimits limits;
  limits.doing = "compiling";
  limits.wall_seconds = options.compile_timeout_seconds;
  limits.cpu_seconds =
      options.compile_timeout_seconds > 0 ? options.compile_timeout_seconds + 1 : 0;
  limits.memory_bytes = options.compile_memory_bytes;
  limits.file_bytes = options.file_bytes;
  const std::vector<toolchain::ChildReply> replies = toolchain::run_in_children(work, jobs, limits);
  for (size_t k = 0; k < compiled.size(); ++k) {
    CompiledCandidate& c = out[compiled[k]];
    c.seconds = replies[k].seconds;
    if (replies[k].ok)
      c.object = decode_object(replies[k].reply);
    else
      c.object.diagnostics = "Clang " + replies[k].why;
  }
  return out;
}

// A CUDA candidate built by NVRTC for the target's SM: its cubin as `object`, and its
// launches' text in `launches`; not ok when a kernel is over a limit of the descriptor
// (never emitted, so never timed) or NVRTC cannot build it (`environment`: the machine's
// failure, not the candidate's).
toolchain::InProcessObject build_cuda_candidate(const ir::LoopProgram& loops,
                                                const ir::Target& target, std::string* launches,
                                                bool* environment) {
  toolchain::InProcessObject out;
  std::string why;
  const std::optional<BuiltKernels> built = build_kernels(loops, target.gpu, &why);
  if (!built) {
    // NVRTC not installed is the machine's failure; NVRTC crashing on this text, this
    // candidate's.
    out.diagnostics = why;
    *environment = toolchain::nvrtc_major_version() == 0;
    return out;
  }
  for (const ir::KernelResources& r : built->resources)
    for (const std::string& v : ir::limit_violations(target.gpu, r))
      out.diagnostics += r.name + ": " + v + "; ";
  if (!out.diagnostics.empty()) {
    out.diagnostics = "over the limits of " + target.name + ": " + out.diagnostics;
    return out;
  }
  out.ok = true;
  out.object = built->cubin;
  *launches = encode_launches(built->launches);
  return out;
}

}  // namespace

MeasureResult Measurer::measure_source(const std::string& c_source, int64_t scratch_bytes) {
  TLMC_ASSERT(!target_.is_cuda(), "measure_source takes C, for a CPU target");
  const CompiledCandidate compiled = compile_candidates({c_source}, target_, options_, 1).front();
  const toolchain::InProcessObject& obj = compiled.object;
  const double compile_seconds = compiled.seconds;
  if (!obj.ok) {
    MeasureResult out;
    out.status = MeasureStatus::CompileError;
    out.reason = obj.diagnostics.substr(0, 400);
    out.compile_seconds = compile_seconds;
    return out;
  }
  MeasureResult out = run_in_worker(obj.object, scratch_bytes, {});
  out.compile_seconds = compile_seconds;
  return out;
}

MeasureResult Measurer::measure(const std::vector<scheduler::Decision>& schedule) {
  return measure_batch({schedule}, 1).front();
}

std::vector<MeasureResult> Measurer::measure_batch(
    const std::vector<std::vector<scheduler::Decision>>& schedules, int jobs) {
  struct Unit {
    std::string source;        // a CPU target's C
    ir::LoopProgram loops;     // a CUDA target's lowered program
    std::string launches;      // a CUDA target's launches (gpu_candidate.h)
    bool environment = false;  // a CUDA target's: NVRTC could not build it
    int64_t scratch_bytes = 0;
    std::vector<std::optional<ir::Packing>> packings;  // per input
    toolchain::InProcessObject object;
    double compile_seconds = 0;
  };
  std::vector<Unit> units(schedules.size());
  const Clock::time_point lowering = Clock::now();
  for (size_t i = 0; i < schedules.size(); ++i) {
    const ir::LoopProgram loops = scheduler::lower_schedule(
        scheduler::apply_schedule(task_.program, schedules[i]), "candidate");
    if (target_.is_cuda())
      units[i].loops = loops;
    else
      units[i].source = codegen::emit_measurement_source(loops, target_);
    units[i].scratch_bytes = loops.scratch_bytes;
    for (int b = 0; b < loops.num_inputs; ++b)
      units[i].packings.push_back(
          loops.buffers.at(static_cast<size_t>(loops.params.at(static_cast<size_t>(b)))).packing);
  }
  const Clock::time_point compiling = Clock::now();
  times_.lowering += std::chrono::duration<double>(compiling - lowering).count();
  // C compiles in `jobs` children at once; NVRTC in one child at a time (toolchain/nvrtc.h).
  // Both fork from this thread, the process's only one.
  if (target_.is_cuda()) {
    for (Unit& u : units) {
      const Clock::time_point t0 = Clock::now();
      u.object = build_cuda_candidate(u.loops, target_, &u.launches, &u.environment);
      u.compile_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    }
  } else {
    std::vector<std::string> sources;
    for (const Unit& u : units) sources.push_back(u.source);
    std::vector<CompiledCandidate> objects = compile_candidates(sources, target_, options_, jobs);
    for (size_t i = 0; i < units.size(); ++i) {
      units[i].compile_seconds = objects[i].seconds;
      units[i].object = std::move(objects[i].object);
    }
  }
  const Clock::time_point running = Clock::now();
  times_.compiling += std::chrono::duration<double>(running - compiling).count();
  std::vector<MeasureResult> out;
  for (const Unit& u : units) {
    MeasureResult r;
    if (!u.object.ok) {
      r.status = MeasureStatus::CompileError;
      r.reason = u.object.diagnostics.substr(0, 400);
      r.environment = u.environment;
    } else {
      r = run_in_worker(u.object.object, u.scratch_bytes, u.packings, u.launches);
    }
    r.compile_seconds = u.compile_seconds;
    out.push_back(std::move(r));
  }
  // A CUDA worker holds a context, and its device memory, on the GPU: one per task of a
  // model would add up; it lives for one batch.
  if (target_.is_cuda()) stop_worker();
  times_.running += std::chrono::duration<double>(Clock::now() - running).count();
  return out;
}

}  // namespace tlmc::tune
