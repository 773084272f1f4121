// The machine's float32 FMA peak, measured: threads running independent chains of fused
// multiply-adds on the widest vectors the CPU has (AVX-512, else AVX2, else scalar), the
// best of a few tries. A figure in a table is read as a fraction of it.
#pragma once

#include <string>

struct FmaPeak {
  double gflops = 0;  // two floating-point operations per lane of each FMA
  std::string isa;    // the instructions it was measured with
};

FmaPeak measure_fma_peak(int threads);

// The machine's bf16 peaks, measured the same way: vdpbf16ps chains (AVX512_BF16: two bf16
// products a float32 lane) and AMX tdpbf16ps on four accumulator tiles; 0 where the CPU
// (or, for AMX, the kernel's permission) lacks them. Two flops a multiply-add, as above.
struct Bf16Peaks {
  double avx512_bf16 = 0;
  double amx_bf16 = 0;
};

Bf16Peaks measure_bf16_peaks(int threads);
