// What one CUDA kernel uses of an SM (its threads, registers and shared memory, as ptxas
// reports them) checked against a GPU descriptor, and the occupancy that follows: how many
// of its blocks one SM holds at once, and which resource stops the next one.
#pragma once

#include <string>
#include <vector>

#include "ir/target.h"

namespace tlmc::ir {

struct KernelResources {
  std::string name;              // the __global__ function
  int threads = 1;               // per block
  int registers = 0;             // per thread, as allocated by ptxas
  int stack_bytes = 0;           // local memory per thread: the stack frame (spills included)
  int spill_stores = 0;          // bytes ptxas stores to local memory for want of registers
  int spill_loads = 0;           // and loads back
  int shared_bytes = 0;          // static shared memory per block
  int dynamic_shared_bytes = 0;  // asked for at launch (ir::dynamic_shared_bytes), per block
  int barriers = 0;              // named barriers used (__syncthreads is barrier 0)
  int constant_bytes = 0;        // the kernel's parameter bank, cmem[0]
};

struct Occupancy {
  int blocks_per_sm = 0;      // resident at once; 0: the kernel cannot launch
  double warps_fraction = 0;  // resident warps over the SM's most
  std::string limited_by;     // "threads", "blocks", "registers" or "shared memory"
};

// The CUDA occupancy calculator's arithmetic for compute capability 8.x and 9.0: registers
// are allocated per warp in units of 256, shared memory per block in units of 128 bytes with
// 1 KiB reserved per block.
Occupancy occupancy(const GpuLimits& gpu, const KernelResources& k);

// What `k` exceeds of the descriptor, one line each (threads, registers per thread and per
// block, static shared memory per block, static and dynamic together per block (the opt-in
// limit) and per SM); empty when it can launch.
std::vector<std::string> limit_violations(const GpuLimits& gpu, const KernelResources& k);

}  // namespace tlmc::ir
