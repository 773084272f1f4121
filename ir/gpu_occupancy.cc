#include "ir/gpu_occupancy.h"

#include <algorithm>

namespace tlmc::ir {
namespace {

int round_up(int value, int unit) { return (value + unit - 1) / unit * unit; }

int warps_of(const GpuLimits& gpu, const KernelResources& k) {
  return (k.threads + gpu.warp - 1) / gpu.warp;
}

// Shared memory one resident block takes of its SM.
int shared_per_block(const KernelResources& k) {
  return round_up(k.shared_bytes + k.dynamic_shared_bytes, 128) + 1024;
}

// Registers one resident block takes of its SM.
int registers_per_block(const GpuLimits& gpu, const KernelResources& k) {
  return round_up(std::max(k.registers, 1) * gpu.warp, 256) * warps_of(gpu, k);
}

}  // namespace

Occupancy occupancy(const GpuLimits& gpu, const KernelResources& k) {
  Occupancy o;
  if (!limit_violations(gpu, k).empty()) return o;
  const int warps = warps_of(gpu, k);
  const std::pair<int, const char*> limits[] = {
      {gpu.threads_per_sm / (warps * gpu.warp), "threads"},
      {gpu.blocks_per_sm, "blocks"},
      {gpu.regs_per_sm / registers_per_block(gpu, k), "registers"},
      {gpu.smem_per_sm / shared_per_block(k), "shared memory"},
  };
  const auto least =
      std::min_element(std::begin(limits), std::end(limits),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
  o.blocks_per_sm = least->first;
  o.limited_by = least->second;
  o.warps_fraction = static_cast<double>(o.blocks_per_sm * warps * gpu.warp) / gpu.threads_per_sm;
  return o;
}

std::vector<std::string> limit_violations(const GpuLimits& gpu, const KernelResources& k) {
  std::vector<std::string> out;
  const auto over = [&](int used, int most, const std::string& what) {
    if (used > most)
      out.push_back(what + " " + std::to_string(used) + " > " + std::to_string(most));
  };
  over(k.threads, gpu.threads_per_block, "threads per block");
  over(k.registers, gpu.regs_per_thread, "registers per thread");
  over(registers_per_block(gpu, k), gpu.regs_per_block, "registers per block");
  over(k.shared_bytes, gpu.smem_per_block, "static shared memory per block");
  over(k.shared_bytes + k.dynamic_shared_bytes, gpu.smem_optin_per_block,
       "shared memory per block (dynamic, opted in)");
  over(shared_per_block(k), gpu.smem_per_sm, "shared memory per SM (one block, reserve included)");
  return out;
}

}  // namespace tlmc::ir
