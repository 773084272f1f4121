// Runs a generated model library in a child process with a time limit, so that a kernel
// that crashes or hangs costs one run, never the compiler. The library is a shared object
// exporting NAME_run and NAME_workspace_size (spec/driver.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tlmc::toolchain {

struct IsolatedRun {
  enum Status { Ok, Crashed, TimedOut, Failed } status = Failed;
  std::string message;                        // why, when not Ok
  std::vector<std::vector<uint8_t>> outputs;  // the first run's outputs
  double median_seconds = 0;                  // over `timing_runs` further runs (0 if none)
};

IsolatedRun run_isolated(const std::string& shared_library, const std::string& model_name,
                         const std::vector<std::vector<uint8_t>>& inputs,
                         const std::vector<size_t>& output_bytes, int timeout_seconds,
                         int timing_runs = 0);

}  // namespace tlmc::toolchain
