// `fma_peak THREADS`: prints the machine's measured float32 FMA peak (fma_peak.h) as
// "GFLOPS ISA", for the end-to-end benchmark's header (bench/e2e_vs_pytorch.py).
#include <cstdio>
#include <cstdlib>

#include "fma_peak.h"

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  if (threads < 1) {
    std::fprintf(stderr, "usage: fma_peak THREADS (at least 1)\n");
    return 2;
  }
  const FmaPeak peak = measure_fma_peak(threads);
  std::printf("%.1f %s\n", peak.gflops, peak.isa.c_str());
  return 0;
}
