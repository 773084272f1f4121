#include "driver/cuda_kernel_check.h"

#include <cstdio>
#include <ostream>

#include "codegen/emit_cuda.h"
#include "ir/diagnostic.h"
#include "scheduler/gpu_cost_model.h"
#include "toolchain/nvrtc.h"

namespace tlmc::driver {
namespace {

const codegen::GeneratedFile& file_named(const CompiledModel& m, const std::string& name) {
  for (const codegen::GeneratedFile& f : m.files)
    if (f.name == name) return f;
  TLMC_ASSERT(false, "no generated file " << name);
}

}  // namespace

void check_cuda_kernels(const ir::Target& target, CompiledModel& m, std::ostream* note) {
  const std::string& n = m.plan.name;
  const std::string header = n + "_cuda.h";
  std::string why;
  const std::optional<toolchain::NvrtcOutput> built =
      toolchain::nvrtc_compile(file_named(m, n + ".cu").contents, n + ".cu",
                               {{header, file_named(m, header).contents}}, target.gpu, &why);
  std::vector<toolchain::KernelLaunch> launches;
  for (const codegen::CudaLaunch& l : codegen::cuda_launches(m.plan, target.gpu))
    launches.push_back({l.kernel, l.threads, l.dynamic_shared_bytes});
  std::optional<std::vector<ir::KernelResources>> kernels;
  if (built) kernels = toolchain::launched_kernels(*built, launches, &why);
  if (!kernels) {
    m.cuda_unchecked = why;
    if (note)
      *note << "tlmc: note: the CUDA kernels' registers, spills and occupancy were not checked: "
            << why << "\n";
    return;
  }
  std::string over;
  for (const ir::KernelResources& k : *kernels)
    for (const std::string& v : ir::limit_violations(target.gpu, k))
      over += "  " + k.name + ": " + v + "\n";
  if (!over.empty())
    throw InternalError("generated CUDA kernels exceed the limits of " + target.name + " (" +
                        target.descriptor() + "):\n" + over);
  m.cuda_kernels = std::move(*kernels);
}

std::vector<scheduler::GpuEstimate> estimate_cuda_kernels(const ir::Target& target,
                                                          const CompiledModel& m) {
  std::vector<scheduler::GpuEstimate> out;
  size_t next = 0;  // m.cuda_kernels holds every kernel's launches, in order
  for (const codegen::KernelInfo& ki : m.plan.kernels) {
    const size_t n = ir::gpu_roots(ki.loops).size();
    std::vector<ir::KernelResources> mine;
    if (!m.cuda_kernels.empty()) {
      TLMC_ASSERT(next + n <= m.cuda_kernels.size(), "ptxas reports fewer kernels than launched");
      mine.assign(m.cuda_kernels.begin() + static_cast<long>(next),
                  m.cuda_kernels.begin() + static_cast<long>(next + n));
      next += n;
    }
    out.push_back(scheduler::estimate_gpu_time(ki.loops, target.gpu, mine));
  }
  return out;
}

void print_cuda_kernels(std::ostream& os, const ir::Target& target, const CompiledModel& m) {
  if (!m.cuda_unchecked.empty()) {
    os << "# CUDA kernels not checked: " << m.cuda_unchecked << "\n";
    return;
  }
  os << "# CUDA kernels for " << target.name << " (ptxas through NVRTC; occupancy for "
     << target.gpu.sms << " SMs; estimate: the analytic model, never measured, against a peak of "
     << target.gpu.fp32_gflops << " GFLOP/s)\n";
  char line[320];
  std::snprintf(line, sizeof line, "%-28s %8s %5s %5s %6s %11s %6s %3s %6s %6s %-13s %9s %8s %s\n",
                "kernel", "blocks", "thr", "regs", "stack", "spill st/ld", "smem", "bar", "blk/SM",
                "warps", "limited by", "est us", "GFLOP/s", "bound");
  os << line;
  size_t next = 0;  // m.cuda_kernels holds every kernel's launches, in order
  for (const scheduler::GpuEstimate& estimate : estimate_cuda_kernels(target, m))
    for (const scheduler::GpuLaunchEstimate& e : estimate.launches) {
      const ir::KernelResources& k = m.cuda_kernels.at(next++);
      const std::string spills =
          std::to_string(k.spill_stores) + "/" + std::to_string(k.spill_loads);
      std::snprintf(line, sizeof line,
                    "%-28s %8lld %5d %5d %6d %11s %6d %3d %6d %5.0f%% %-13s %9.2f %8.0f %s\n",
                    k.name.c_str(), static_cast<long long>(e.blocks), k.threads, k.registers,
                    k.stack_bytes, spills.c_str(), k.shared_bytes + k.dynamic_shared_bytes,
                    k.barriers, e.occupancy.blocks_per_sm, 100 * e.occupancy.warps_fraction,
                    e.occupancy.limited_by.c_str(), e.seconds * 1e6, e.flops / e.seconds / 1e9,
                    e.bound.c_str());
      os << line;
    }
}

}  // namespace tlmc::driver
