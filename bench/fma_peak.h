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
