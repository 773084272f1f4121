// The kernels of kernels.cuh instantiated and launched, for nvcc: the dialect is CUDA.
#include "kernels.cuh"

cudaError_t launch_all(const float* a, const float* b, float* c, int* counts, const int* values) {
  cudaError_t e = TLMC_LAUNCH(matmul_tiled<true>, dim3(2, 2), dim3(kTile, kTile), 0, nullptr, a, b,
                              c, 16, 16, 16);
  if (e != cudaSuccess) return e;
  e = TLMC_LAUNCH(row_sum, dim3(4), dim3(64), 0, nullptr, a, c, 100);
  if (e != cudaSuccess) return e;
  e = TLMC_LAUNCH(reverse_blocks, dim3(4), dim3(32), 32 * sizeof(float), nullptr, c);
  if (e != cudaSuccess) return e;
  e = TLMC_LAUNCH(copy_fours, dim3(1), dim3(32), 0, nullptr, a, c, 0);
  if (e != cudaSuccess) return e;
  return TLMC_LAUNCH(histogram, dim3(1), dim3(64), 0, nullptr, values, counts, 64);
}
