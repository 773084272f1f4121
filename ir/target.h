// The hardware descriptor that sketch rules, the code generator, the tuning records and the
// language model read: a CPU's instruction set, vector width, cores and caches, or a CUDA
// GPU's limits and speeds; detected on the host or named by --target, fields overridable
// (--target-option), with a stable text form that keys every tuning record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tlmc::ir {

enum class TargetKind { Cpu, Cuda };
enum class Isa { Generic, Avx2, Avx512 };

// The bf16 product instructions a CPU has, each level including the one before: none;
// AVX512_BF16 (vdpbf16ps: two bf16 products a float32 lane); AMX (tdpbf16ps on tiles).
enum class Bf16Unit { None, Avx512Bf16, Amx };

// A CUDA GPU: what bounds a kernel's launch (threads, registers, shared memory per block and
// per SM) and what bounds its speed (SMs, DRAM bandwidth, float32 peak).
struct GpuLimits {
  int sm = 80;                            // compute capability, major * 10 + minor
  int sms = 108;                          // streaming multiprocessors
  int warp = 32;                          // threads per warp (32 on every NVIDIA GPU)
  int threads_per_block = 1024;           // most threads one block may have
  int threads_per_sm = 2048;              // most threads resident on one SM
  int blocks_per_sm = 32;                 // most blocks resident on one SM
  int regs_per_sm = 65536;                // 32-bit registers of one SM
  int regs_per_block = 65536;             // most registers one block may hold
  int regs_per_thread = 255;              // most registers one thread may use
  int smem_per_block = 48 * 1024;         // shared memory a block may declare statically
  int smem_optin_per_block = 163 * 1024;  // dynamic, after cudaFuncSetAttribute opts in
  int smem_per_sm = 164 * 1024;           // shared memory of one SM
  int64_t l2_bytes = 40LL * 1024 * 1024;  // the device's L2 cache
  int bandwidth_gbs = 2039;               // DRAM bandwidth, GB/s
  int fp32_gflops = 19492;                // float32 peak, an FMA counted as two operations
  std::string device = "a100-sxm";        // a label: the GPU measured, or the defaults named
};

struct Target {
  std::string name;  // as given on the command line: "x86-64-avx512", ...
  TargetKind kind = TargetKind::Cpu;
  Isa isa = Isa::Generic;  // CPU: Generic is plain C, no explicit SIMD
  // CPU: the bf16 products it computes natively (--precision bf16 needs one). Not part of
  // the descriptor: float32 kernels do not depend on it, and bf16 kernels are other
  // workloads (their tensors' types are in the workload key) of processors the descriptor's
  // cpu names.
  Bf16Unit bf16 = Bf16Unit::None;
  int vector_bytes = 16;        // CPU: SIMD register width the code generator targets
  int cores = 1;                // CPU: threads the generated code runs with, and is tuned for
  int l1_bytes = 32 * 1024;     // CPU: L1 data cache of one core
  int l2_bytes = 1024 * 1024;   // CPU: L2 cache of one core
  int64_t l3_bytes = 0;         // CPU: last-level cache, shared; 0 when there is none
  std::string cpu = "generic";  // CPU: "vendor-family-model" from cpuid; "generic" if not measured
  GpuLimits gpu;                // CUDA only
  bool runs_here = false;       // the host executes this target's code: candidates can be measured
  // Kernels are measured with their constant inputs (weights) out of the caches: a model
  // whose weights exceed the cores' L2 caches reads them from memory in every run. Part of
  // the descriptor (" weights=cold"): warm and cold times are never compared.
  bool cold_weights = false;

  bool is_cuda() const { return kind == TargetKind::Cuda; }
  int vector_lanes(size_t element_bytes) const {
    return vector_bytes / static_cast<int>(element_bytes);
  }
  // Architectural vector registers (x86-64: 32 with AVX-512, else 16).
  int vector_registers() const { return isa == Isa::Avx512 ? 32 : 16; }
  // Flags for the system C compiler: "-march=..." and friends.
  std::string cc_flags() const;
  // The stable text form, part of every tuning record's key, so that a record measured on
  // one machine is never used for another ISA, core count, cache hierarchy, processor or GPU:
  //   "hw1 isa=avx512 vec=64 cores=2 l1d=48K l2=2048K l3=16384K cpu=intel-6-143", then
  //   " weights=cold" when cold_weights;
  //   "gpu1 sm=90 sms=132 warp=32 threads/block=1024 threads/sm=2048 blocks/sm=32
  //   regs/sm=65536 regs/block=65536 regs/thread=255 smem/block=48K smem/block-optin=227K
  //   smem/sm=228K l2=51200K bw=3352GB/s fp32=66908GF/s device=h100-sxm" (one line).
  std::string descriptor() const;
};

// "host", "x86-64", "x86-64-avx2", "x86-64-avx512", "x86-64-avx512-bf16" (with AVX512_BF16),
// "x86-64-amx" (AVX-512 with AVX512_BF16 and AMX), "cuda-sm80", "cuda-sm90", "cuda";
// nullopt for a name it does not know, or "cuda" where no GPU is found (unknown_target says
// why). A named ISA the host can execute takes the host's cores, caches and cpu (its code is
// measured here), otherwise fixed defaults and runs_here false; likewise a named SM takes the
// GPU found here when it is of that SM, else the defaults of an A100-SXM (sm80) or an
// H100-SXM (sm90). "cuda" is the GPU found here.
std::optional<Target> parse_target(const std::string& name);
// Why parse_target refused `name`: a message that says what to name instead.
std::string unknown_target(const std::string& name);
// The machine tlmc runs on, detected (never assumed).
Target host_target();
// The target a descriptor describes (as Target::descriptor writes it, or with more words
// after it, which are ignored); runs_here is false and the name is the one a --target of its
// ISA or SM has. nullopt when it is not a descriptor.
std::optional<Target> parse_descriptor(const std::string& descriptor);
// Sets one field of the descriptor, KEY=VALUE written as the descriptor writes it
// ("cores=4", "l2=1024K", "sms=114", "smem/block-optin=99K"); the ISA, SM and warp stay as
// --target named them. Returns an empty string, or the error (and `target` is unchanged).
std::string set_target_option(Target& target, const std::string& key_value);
// The names parse_target accepts, for messages.
std::string target_names();

}  // namespace tlmc::ir
