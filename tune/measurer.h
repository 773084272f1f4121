// Measures candidate schedules of one task: each is generated as C, compiled by Clang's
// libraries (toolchain/clang_in_process.h) in a child process of its own under a time and
// memory limit, then loaded and run in a worker process forked from tlmc that lives for many
// candidates, under limits of memory, CPU time and file size (MeasureOptions). For a CUDA target,
// each is generated as CUDA, built by NVRTC for the target's SM (one over a limit of the descriptor
// fails, never timed) and run on the GPU by the worker (tune/gpu_candidate.h), which lives for one
// batch (it holds a CUDA context): tlmc's own process never initialises CUDA, so that it may fork
// workers. The worker checks a candidate's outputs against the reference before timing it; a
// candidate that crashes, hangs past its limit or computes a wrong answer is a failed measurement
// with its reason, never a failure of the compiler: the worker is started again for the next one.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "ir/loop.h"
#include "ir/target.h"
#include "scheduler/decision.h"
#include "scheduler/tuning_db.h"
#include "tune/measure_task.h"

namespace tlmc::tune {

// On a CUDA target, `threads` and `cold_weights` do not apply, and a timed repeat is `n` runs
// of the candidate's launches enqueued back to back between two CUDA events.
struct MeasureOptions {
  int threads = 0;              // threads of the parallel loops; 0: the target's cores
  double min_seconds = 0.005;   // each timed repeat runs the kernel at least this long
  int repeats = 5;              // timed repeats; the time is their median
  double timeout_seconds = 10;  // one candidate's check and timing, compilation excluded
  // Flush the constant inputs (weights) from the caches before every timed run, and time
  // each run alone (ir::Target::cold_weights).
  bool cold_weights = false;
  // A candidate's C longer than this is not compiled but failed (CompileError): written
  // out by a large unroll, it keeps Clang busy for seconds to minutes and is not fast. Of
  // ~3000 candidates of ten workloads (W1-W6, U1, U4-U6), none over 256 KB came within 2x
  // of its task's best, while a few of 128-256 KB did; the -O0 kernels are under 20 KB.
  size_t max_source_bytes = size_t{256} << 10;
  // Limits that keep a runaway candidate from exhausting the machine (toolchain/
  // limited_child.h); passing one fails the candidate with the limit named. Its C is
  // compiled in a child process of its own, given this long and this much memory beyond
  // tlmc's own:
  double compile_timeout_seconds = 120;
  int64_t compile_memory_bytes = int64_t{4} << 30;
  // Its run, in the worker: resident memory beyond tlmc's own (0: 2 GiB, plus four times
  // the bytes of the task's inputs and outputs, plus the candidate's scratch), CPU time
  // (0: the time limit times the threads, plus a second) and the largest file it may write.
  int64_t run_memory_bytes = 0;
  double run_cpu_seconds = 0;
  int64_t file_bytes = int64_t{64} << 20;
};

struct MeasureResult {
  scheduler::MeasureStatus status = scheduler::MeasureStatus::Ok;
  // One run, median over the repeats; Ok only. A candidate slower than the slow cut
  // (Measurer::set_slow_cut) at its first timed run: that run's time.
  double seconds = 0;
  std::string reason;  // why, when not Ok
  double compile_seconds = 0;
  // With cold weights: what evicting the weights the kernel reads took before each timed
  // run (its wall time counts against the candidate's limit, its time does not).
  double evict_seconds = 0;
  int64_t evicted_bytes = 0;  // how much of the weights that eviction covered
  // The machine failed, not the candidate (a CUDA target's: no GPU or driver in the worker,
  // a cubin the driver cannot load, no device memory): never a record of the candidate.
  bool environment = false;
};

// Where a measurer's time went, in seconds of wall clock, summed over its candidates.
struct MeasureTimes {
  double lowering = 0;   // applying schedules, lowering, writing C
  double compiling = 0;  // C to machine code (threads in parallel count once)
  double running = 0;    // in the worker: loading, checking, timing; restarts included
};

class Measurer {
 public:
  Measurer(const MeasureTask& task, const ir::Target& target, MeasureOptions options);
  ~Measurer();  // stops the worker
  Measurer(const Measurer&) = delete;
  Measurer& operator=(const Measurer&) = delete;

  // Generates, compiles, checks and times one candidate schedule of the task's program.
  MeasureResult measure(const std::vector<scheduler::Decision>& schedule);
  // The same for a batch: compiled by `jobs` threads at once, then run one at a time (no
  // compilation runs while a candidate is timed).
  std::vector<MeasureResult> measure_batch(
      const std::vector<std::vector<scheduler::Decision>>& schedules, int jobs);
  // The same for a measurement unit written by hand (codegen/emit_measurement.h): tests
  // inject crashing, hanging and wrong candidates through it.
  MeasureResult measure_source(const std::string& c_source, int64_t scratch_bytes);
  // Changes the time limit of one candidate's check and timing (MeasureOptions::timeout_seconds).
  void set_timeout(double seconds) { options_.timeout_seconds = seconds; }
  // A candidate whose first timed run (the one after the check) takes longer
  // than this is reported with that run's time, without the repeats: it cannot be the
  // best, and its repeats would cost more than many fast candidates' (0: time each in full).
  void set_slow_cut(double seconds) { slow_seconds_ = seconds; }
  // Workers started so far (1 until a candidate kills one).
  int workers_started() const { return workers_started_; }
  const MeasureTimes& times() const { return times_; }

 private:
  // `packings`: per kernel input, the layout it takes (none: the model's).
  // `launches`: a CUDA target's (gpu_candidate.h), whose `object` is the cubin.
  MeasureResult run_in_worker(const std::string& object, int64_t scratch_bytes,
                              const std::vector<std::optional<ir::Packing>>& packings,
                              const std::string& launches = {});
  void start_worker();
  void stop_worker();

  const MeasureTask& task_;
  ir::Target target_;
  MeasureOptions options_;
  // The memory limits of a candidate's run without its scratch (MeasureOptions::run_memory_bytes).
  int64_t run_memory_bytes() const;

  pid_t worker_ = -1;
  int socket_ = -1;              // the parent's end of the socket pair
  int64_t worker_baseline_ = 0;  // tlmc's resident bytes when the worker was forked
  int workers_started_ = 0;
  double slow_seconds_ = 0;
  MeasureTimes times_;
};

}  // namespace tlmc::tune
