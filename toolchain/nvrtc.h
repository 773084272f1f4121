// NVRTC, the CUDA toolkit's compiler library, loaded at run time (tlmc neither links with it
// nor needs it): compiles a CUDA translation unit for one SM, in a forked child of the
// compiler, and reads back ptxas's resource report of every __global__ function. Compiling
// never initialises CUDA.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/gpu_occupancy.h"

namespace tlmc::toolchain {

struct NvrtcOutput {
  std::string version;                       // "13.0"
  std::string log;                           // NVRTC's and ptxas's messages
  std::vector<ir::KernelResources> kernels;  // ptxas's report, in its order (threads left 1)
  std::string cubin;                         // the SASS, for cuModuleLoadData
};

// Compiles `source` (named `file_name` in messages; `headers` are the files it may include,
// name and text) for the GPU's SM into SASS, with ptxas's verbose report. nullopt, with the
// reason in `why`, when NVRTC cannot be loaded ($CUDA_PATH/lib64, $CUDA_HOME/lib64, beside
// nvcc, /usr/local/cuda/lib64, then the loader's path) or crashed on every attempt (see
// nvrtc.cc). Throws InternalError, with the log, when the text does not compile or draws a
// warning: tlmc's text must compile cleanly.
std::optional<NvrtcOutput> nvrtc_compile(
    const std::string& source, const std::string& file_name,
    const std::vector<std::pair<std::string, std::string>>& headers, const ir::GpuLimits& gpu,
    std::string* why);

// The major version of the NVRTC nvrtc_compile loads ("13" of 13.0); 0 where none loads.
int nvrtc_major_version();

// One launch of a kernel: what ptxas's report lacks of it.
struct KernelLaunch {
  std::string kernel;
  int64_t threads = 1;               // per block
  int64_t dynamic_shared_bytes = 0;  // per block, asked for at launch
};

// Each launched kernel's resources from `out`, in the order of `launches`; nullopt, with the
// reason in `why`, where ptxas's report names one of them not.
std::optional<std::vector<ir::KernelResources>> launched_kernels(
    const NvrtcOutput& out, const std::vector<KernelLaunch>& launches, std::string* why);

// The resources ptxas reports (its -v lines) per entry function, in order.
std::vector<ir::KernelResources> parse_ptxas_report(const std::string& log);

}  // namespace tlmc::toolchain
