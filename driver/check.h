// `tlmc --check MODEL`: compiles the model, runs the library in a child process on random
// inputs, evaluates the graph with the reference interpreter and compares every output. A
// CUDA target's library runs on the GPU of this machine when it is of the target's SM, else
// in the CPU emulator (runtime/cuda_emulation).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "driver/compile.h"

namespace tlmc::driver {

struct OutputError {
  std::string name;
  double max_abs = 0;  // largest |generated - reference|
  double max_rel = 0;  // largest |generated - reference| / max(|reference|, 1e-6)
  bool within_tolerance = true;
};

struct CheckResult {
  std::vector<OutputError> outputs;
  bool passed = true;
  // Where a CUDA target's library ran: "on the GPU (DEVICE)" or "in the CPU emulator";
  // empty for a CPU target (this machine's processor).
  std::string ran;
};

// Tolerances: an element passes when |got - want| <= kCheckAtol + kCheckRtol * |want|.
constexpr double kCheckAtol = 1e-4;
constexpr double kCheckRtol = 1e-3;

// Inputs are drawn from a generator seeded with `seed`: floats uniform in [-1, 1]; integer
// inputs that index a Gather uniform over the valid indices, others in [0, 4).
CheckResult check_model(const CompiledModel& model, const ir::Target& target, uint64_t seed = 1,
                        CCompiler cc = CCompiler::InProcess);
void print_check(std::ostream& os, const CheckResult& r);

}  // namespace tlmc::driver
