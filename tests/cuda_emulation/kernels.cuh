// Hand-written kernels in the CUDA dialect tlmc emits (shared arrays and launches through the
// macros of tlmc_cuda.h): compiled by nvcc for sm_80 when the toolkit is here, and run by the
// CPU emulator, correct and with the mistakes it must catch.
#pragma once

#include "tlmc_cuda.h"

constexpr int kTile = 8;

// C[m, n] = sum over k of A[m, k] * B[k, n]; one thread an element of C, tiles of A and B
// staged through shared memory. `barrier_after_use`: the __syncthreads() before a tile is
// overwritten; without it the next tile's loads race with this tile's reads.
template <bool barrier_after_use>
__global__ void __launch_bounds__(kTile* kTile)
    matmul_tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                 int m, int n, int k) {
  TLMC_SHARED(float, a_tile, kTile* kTile);
  TLMC_SHARED(float, b_tile, kTile* kTile);
  const int row = blockIdx.y * kTile + threadIdx.y, col = blockIdx.x * kTile + threadIdx.x;
  if (row >= m || col >= n) return;  // the grid covers C exactly: never taken
  float acc = 0.0f;
  for (int k0 = 0; k0 < k; k0 += kTile) {
    a_tile[threadIdx.y * kTile + threadIdx.x] = a[row * k + k0 + threadIdx.x];
    b_tile[threadIdx.y * kTile + threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int kk = 0; kk < kTile; ++kk)
      acc += a_tile[threadIdx.y * kTile + kk] * b_tile[kk * kTile + threadIdx.x];
    if (barrier_after_use) __syncthreads();
  }
  c[row * n + col] = acc;
}

// out[r] = sum of in[r, :]: one block a row, each thread a strided part, then a shuffle tree
// within each warp and the warps' sums through shared memory.
__global__ void row_sum(const float* __restrict__ in, float* __restrict__ out, int columns) {
  TLMC_SHARED(float, warp_sums, 32);
  float v = 0.0f;
  for (int j = threadIdx.x; j < columns; j += blockDim.x) v += in[blockIdx.x * columns + j];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < (int)(blockDim.x / 32); ++w) total += warp_sums[w];
    out[blockIdx.x] = total;
  }
}

// Reverses each block's part of `data` through dynamic shared memory.
__global__ void reverse_blocks(float* __restrict__ data) {
  TLMC_DYNAMIC_SHARED(float, staged);
  const int base = blockIdx.x * blockDim.x;
  staged[threadIdx.x] = data[base + threadIdx.x];
  __syncthreads();
  data[base + threadIdx.x] = staged[blockDim.x - 1 - threadIdx.x];
}

// Counts values by their remainder mod 4, with atomics on global memory.
__global__ void histogram(const int* __restrict__ values, int* __restrict__ counts, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&counts[values[i] % 4], 1);
}

// Threads past `live` return before the barrier the others wait at.
__global__ void early_return(float* __restrict__ data, int live) {
  TLMC_SHARED(float, staged, 64);
  if ((int)threadIdx.x >= live) return;
  staged[threadIdx.x] = data[threadIdx.x];
  __syncthreads();
  data[threadIdx.x] = staged[(threadIdx.x + 1) % live];
}

// Even and odd threads wait at two different barriers.
__global__ void split_barriers(float* __restrict__ data) {
  if (threadIdx.x % 2 == 0) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  data[threadIdx.x] = 1.0f;
}

// Each thread copies four floats from `in + 4 t + offset` into a shared array in one 16-byte
// copy, then writes them back out reversed within the block. An offset that is not a
// multiple of 4 misaligns the copy, which a GPU refuses (cudaErrorMisalignedAddress).
__global__ void copy_fours(const float* __restrict__ in, float* __restrict__ out, int offset) {
  TLMC_SHARED(float, fours, 128);
  TLMC_COPY4(fours, 4 * threadIdx.x, in, 4 * threadIdx.x + offset);
  __syncthreads();
  for (int i = 0; i < 4; ++i) out[4 * threadIdx.x + i] = fours[127 - 4 * threadIdx.x - i];
}

// The first 32 threads write their element of a shared array; after the barrier every
// thread reads its own: with more than 32 threads, some read what no thread wrote.
__global__ void read_unwritten(float* __restrict__ out) {
  TLMC_SHARED(float, staged, 64);
  if (threadIdx.x < 32) staged[threadIdx.x] = (float)threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = staged[threadIdx.x];
}

// Each lane takes the value of the lane 16 away, its mask naming `mask` (0: the lanes its
// warp has): right only when the mask names exactly the warp's lanes and the lane 16 away
// is one of them.
__global__ void swap_halves(float* __restrict__ data, unsigned mask) {
  const unsigned left = blockDim.x - threadIdx.x / 32 * 32;
  const unsigned lanes = left >= 32 ? 0xffffffffu : (1u << left) - 1u;
  data[threadIdx.x] = __shfl_xor_sync(mask != 0 ? mask : lanes, data[threadIdx.x], 16);
}

// Stages a block's part of `data` through dynamic shared memory of blockDim.x floats per
// 1024 bytes asked: past 48 KiB it needs the kernel's opt-in (cudaFuncSetAttribute).
__global__ void stage_dynamic(float* __restrict__ data) {
  TLMC_DYNAMIC_SHARED(float, staged);
  staged[threadIdx.x] = data[threadIdx.x] + 1.0f;
  __syncthreads();
  data[threadIdx.x] = staged[threadIdx.x];
}

// Reads element n of `in`: one past an allocation of n elements.
__global__ void read_at(const float* __restrict__ in, float* __restrict__ out, int n) {
  out[0] = in[n];
}

// Every block writes its index to out[0]: which remains depends on the order blocks run in,
// the race `tlmc --check` looks for by running the blocks in both orders.
__global__ void last_block_wins(float* __restrict__ out) {
  if (threadIdx.x == 0) out[0] = (float)blockIdx.x;
}
