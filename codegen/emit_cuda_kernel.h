// Emits one loop-nest kernel as CUDA C++ for the .cu file of a CUDA target: each statement
// at the root of the nest (a stage's loops, or a reduction's initialisation) becomes one
// __global__ function, launched over the blocks and threads its bound loops give (one block
// of one thread where none is bound), in order. Intermediates at the root live in the
// workspace (global memory) and local buffers in each thread's registers. Needs a program
// that passes verify_loops whose bound loops are at the top of a root statement, the block
// loop outside the thread loop (the GPU sketch rules bind them so).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/loop.h"
#include "ir/target.h"

namespace tlmc::codegen {

struct CudaLaunch {
  std::string kernel;  // the __global__ function
  int64_t blocks = 1;
  int64_t threads = 1;
  int64_t dynamic_shared_bytes = 0;  // ir::dynamic_shared_bytes: asked for at launch
};

struct CudaKernelSource {
  std::string text;                  // the __global__ functions
  std::vector<CudaLaunch> launches;  // in the order they run
  // The parameters every launch takes, in order: the program's buffers, then the scratch
  // memory ("const float* __restrict__ b0, ..., char* __restrict__ scratch").
  std::string parameters;
};

// `gpu` bounds each kernel's registers per thread (__launch_bounds__, or __maxnreg__ where
// the descriptor allows fewer than the hardware).
CudaKernelSource emit_cuda_kernel(const ir::LoopProgram& p, const ir::GpuLimits& gpu);

// Device helpers the kernels use (floor division, tlmc's math functions), once per .cu.
std::string cuda_kernel_preamble(bool half_floats = false);

}  // namespace tlmc::codegen
