// `fma_peak THREADS`: prints the machine's measured float32 FMA peak (fma_peak.h) as
// "GFLOPS ISA", for the end-to-end benchmark's header (bench/e2e_vs_pytorch.py).
// `fma_peak THREADS --bf16` prints, below it, "GFLOPS avx512_bf16" and "GFLOPS amx_bf16"
// (0 where the CPU lacks the instructions).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fma_peak.h"

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  if (threads < 1) {
    std::fprintf(stderr, "usage: fma_peak THREADS (at least 1)\n");
    return 2;
  }
  const FmaPeak peak = measure_fma_peak(threads);
  std::printf("%.1f %s\n", peak.gflops, peak.isa.c_str());
  if (argc > 2 && std::string(argv[2]) == "--bf16") {
    const Bf16Peaks bf16 = measure_bf16_peaks(threads);
    std::printf("%.1f avx512_bf16\n%.1f amx_bf16\n", bf16.avx512_bf16, bf16.amx_bf16);
  }
  return 0;
}
