// The static check of a CUDA target's kernels: the generated .cu compiled in process by
// NVRTC for the target's SM, ptxas's report of every kernel read back and held against the
// descriptor (threads, registers, shared memory per block and per SM), and its occupancy.
#pragma once

#include <iosfwd>
#include <vector>

#include "driver/compile.h"
#include "scheduler/gpu_cost_model.h"

namespace tlmc::driver {

// Fills m.cuda_kernels (or m.cuda_unchecked, with a note on `note`, when NVRTC is absent).
// A kernel over a limit is a compiler bug, as text NVRTC refuses or warns about is: both
// throw InternalError and nothing is written.
void check_cuda_kernels(const ir::Target& target, CompiledModel& m, std::ostream* note);

// The analytic model's estimate of each of m.plan.kernels (all its launches), from ptxas's
// report where check_cuda_kernels filled it, else from the model's own assumptions.
std::vector<scheduler::GpuEstimate> estimate_cuda_kernels(const ir::Target& target,
                                                          const CompiledModel& m);

// --dump resources: one line per __global__ function (launch, registers, local memory and
// spills, shared memory, barriers, occupancy and what limits it, and the analytic model's
// estimate: time, GFLOP/s and what bounds it).
void print_cuda_kernels(std::ostream& os, const ir::Target& target, const CompiledModel& m);

}  // namespace tlmc::driver
