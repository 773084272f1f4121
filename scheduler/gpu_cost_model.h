// An analytic estimate of a CUDA kernel's time on a GPU descriptor, for ranking schedules
// where no GPU can time them (Roller, OSDI'22, chooses GPU tiles this way): per launch, the
// work of the busiest SM (waves over the SMs), global traffic in 32-byte sectors (coalescing),
// shared-memory wavefronts (bank conflicts), DRAM bytes, latency hiding by occupancy. An
// estimate ranks; it is never a measurement and never becomes a tuning record.
#pragma once

#include <string>
#include <vector>

#include "ir/gpu_occupancy.h"
#include "ir/loop.h"

namespace tlmc::scheduler {

struct GpuLaunchEstimate {
  std::string kernel;  // the __global__ function, as the emitter names it
  int64_t blocks = 1, threads = 1;
  double seconds = 0;  // the estimate
  double flops = 0;    // float operations, an FMA as two
  // Float instructions' issue slots in lanes, an FMA as one: whole warps, so a block of 7
  // threads takes a warp's 32 (what the compute time is of).
  double lane_slots = 0;
  double dram_bytes = 0;         // the global buffers' bytes it touches, once each
  double sector_bytes = 0;       // global (and spilled local) memory moved in 32-byte sectors
  double shared_wavefronts = 0;  // shared-memory accesses, a bank conflict as more than one
  ir::Occupancy occupancy;
  std::string bound;  // what the estimate says limits it: compute, dram, l2, shared, launch
};

struct GpuEstimate {
  double seconds = 0;  // all launches, in order
  double flops = 0;
  std::vector<GpuLaunchEstimate> launches;
};

// `p` lowered for a CUDA target (its bound loops at the top of each root statement, as the
// emitter needs); `resources`, one per launch in the emitter's order, as ptxas reported
// them (registers, shared memory, spills), or empty to assume 32 registers a thread and two
// per element of its local arrays, the shared arrays' sizes and no spill.
GpuEstimate estimate_gpu_time(const ir::LoopProgram& p, const ir::GpuLimits& gpu,
                              const std::vector<ir::KernelResources>& resources);

}  // namespace tlmc::scheduler
