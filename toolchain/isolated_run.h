// Runs a generated model library in a child process with a time limit, so that a kernel
// that crashes or hangs costs one run, never the compiler. The library is a shared object
// exporting NAME_run and NAME_workspace_size (spec/driver.md). After a first run (whose
// outputs are returned) come timing runs: at least `timing_runs`, and at least as many as
// last `min_timing_seconds`; with `profile_calls`, NAME_profile_read gives each call's time,
// and with `copy_bytes` (one count per call), NAME_profile_copy times a plain copy of as
// many bytes per call, as many times as the model ran (at most kMaxCopyRuns).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tlmc::toolchain {

struct IsolatedRun {
  enum Status { Ok, Crashed, TimedOut, Failed } status = Failed;
  std::string message;                        // why, when not Ok
  std::vector<std::vector<uint8_t>> outputs;  // the first run's outputs
  int timing_runs = 0;                        // made after the first run
  double median_seconds = 0;                  // over the timing runs (0 if none)
  // Per call of the model's kernels, the median over the timing runs of its seconds in one
  // run, from a library emitted with CodegenOptions::profile; empty without `profile_calls`.
  std::vector<double> call_seconds;
  // Per call, the median seconds of NAME_profile_copy of its `copy_bytes`; empty without.
  std::vector<double> copy_seconds;
};

inline constexpr int kMaxCopyRuns = 200;

IsolatedRun run_isolated(const std::string& shared_library, const std::string& model_name,
                         const std::vector<std::vector<uint8_t>>& inputs,
                         const std::vector<size_t>& output_bytes, int timeout_seconds,
                         int timing_runs = 0, double min_timing_seconds = 0, int profile_calls = 0,
                         const std::vector<size_t>& copy_bytes = {});

}  // namespace tlmc::toolchain
