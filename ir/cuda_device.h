// The CUDA GPU of this machine, if any: its limits read from the driver (libcuda, loaded at
// run time; tlmc neither links with it nor needs it) in a child process, so that the process
// asking never initialises CUDA itself (it may fork measurement workers later).
#pragma once

#include <optional>
#include <string>

#include "ir/target.h"

namespace tlmc::ir {

// The first GPU the driver lists (CUDA_VISIBLE_DEVICES applies); nullopt, with the reason in
// `why`, when there is none or no driver. Asked once per process.
std::optional<GpuLimits> find_cuda_gpu(std::string* why);

// The CUDA version the GPU's driver supports (cuDriverGetVersion: 1000 * major + 10 * minor),
// asked with find_cuda_gpu; 0 where there is no driver.
int cuda_driver_version();

// Float32 lanes of one SM of compute capability `sm` (64 to sm_80, 128 from sm_86 on).
int fp32_lanes_per_sm(int sm);

}  // namespace tlmc::ir
