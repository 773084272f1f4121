#include "fma_peak.h"

#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Independent accumulators: enough to cover the FMA latency (4 cycles) times two pipes.
// Their loops are unrolled whole (the pragmas below) so that they stay in registers under
// -O2 too, where GCC would otherwise keep the array in memory (a peak of 124 GFLOP/s
// measured where the kernels ran at 385).
constexpr int kChains = 12;

// Each returns a value derived from the accumulators, so that the loop is not removed.
__attribute__((target("avx512f"))) float chains_avx512(int64_t iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c) * 1e-3F);
  const __m512 a = _mm512_set1_ps(0.999999F), b = _mm512_set1_ps(1e-7F);
  for (int64_t i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  float sum = 0;
  for (int c = 0; c < kChains; ++c) sum += _mm512_reduce_add_ps(acc[c]);
  return sum;
}

__attribute__((target("avx2,fma"))) float chains_avx2(int64_t iterations) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c) * 1e-3F);
  const __m256 a = _mm256_set1_ps(0.999999F), b = _mm256_set1_ps(1e-7F);
  for (int64_t i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  float lanes[8], sum = 0;
  for (int c = 0; c < kChains; ++c) {
    _mm256_storeu_ps(lanes, acc[c]);
    for (float l : lanes) sum += l;
  }
  return sum;
}

float chains_scalar(int64_t iterations) {
  float acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = static_cast<float>(c) * 1e-3F;
  for (int64_t i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * 0.999999F + 1e-7F;
  float sum = 0;
  for (float a : acc) sum += a;
  return sum;
}

// GFLOP/s of `threads` threads each running `iterations` of the chains at once.
double run(int threads, int lanes, float (*chains)(int64_t), int64_t iterations) {
  std::vector<std::thread> pool;
  std::vector<float> sink(static_cast<size_t>(threads));
  const Clock::time_point begin = Clock::now();
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] { sink[static_cast<size_t>(t)] = chains(iterations); });
  for (std::thread& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  volatile float keep = sink[0];
  (void)keep;
  return 2.0 * kChains * lanes * static_cast<double>(iterations) * threads / seconds * 1e-9;
}

// vdpbf16ps: per 32-bit lane, two bf16 products added to the float32 accumulator.
__attribute__((target("avx512f,avx512bf16"))) float chains_avx512_bf16(int64_t iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c) * 1e-3F);
  const __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.5F), _mm512_set1_ps(0.25F));
  const __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-7F), _mm512_set1_ps(1e-7F));
  for (int64_t i = 0; i < iterations; ++i)
#pragma GCC unroll 16
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
  float sum = 0;
  for (int c = 0; c < kChains; ++c) sum += _mm512_reduce_add_ps(acc[c]);
  return sum;
}

// The Linux permission to use AMX tile data, asked for once by the process.
bool amx_permitted() {
#if defined(__linux__)
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  static const bool ok = syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  return ok;
#else
  return false;
#endif
}

// tdpbf16ps: a 16 x 16 float32 tile accumulates a 16 x 32 bf16 tile times a 32 x 16 one
// (16 x 16 x 32 multiply-adds); four accumulator tiles, independent, cover its latency.
__attribute__((target("amx-tile,amx-bf16"))) float chains_amx_bf16(int64_t iterations) {
  struct alignas(64) TileConfig {
    uint8_t palette = 1, start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t bytes_per_row[16] = {};
    uint8_t rows[16] = {};
  } config;
  for (int t = 0; t < 6; ++t) {  // tmm0-3 accumulators, tmm4 and tmm5 the operands
    config.bytes_per_row[t] = 64;
    config.rows[t] = 16;
  }
  _tile_loadconfig(&config);
  alignas(64) static thread_local uint16_t operand[16 * 32];
  alignas(64) static thread_local float result[16 * 16];
  for (uint16_t& v : operand) v = 0x3c00;  // bf16 of 2^-7
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, operand, 64);
  _tile_loadd(5, operand, 64);
  for (int64_t i = 0; i < iterations; ++i) {
    _tile_dpbf16ps(0, 4, 5);
    _tile_dpbf16ps(1, 4, 5);
    _tile_dpbf16ps(2, 4, 5);
    _tile_dpbf16ps(3, 4, 5);
  }
  _tile_stored(0, result, 64);
  float sum = result[0];
  _tile_stored(3, result, 64);
  sum += result[255];
  _tile_release();
  return sum;
}

}  // namespace

Bf16Peaks measure_bf16_peaks(int threads) {
  __builtin_cpu_init();
  Bf16Peaks out;
  auto best_of = [&](int flops_per_iteration, float (*chains)(int64_t), int64_t iterations) {
    double best = 0;
    run(threads, 1, chains, iterations / 20);  // warm-up
    for (int attempt = 0; attempt < 3; ++attempt) {
      const double g = run(threads, 1, chains, iterations);
      best = std::max(best, g / (2.0 * kChains) * flops_per_iteration);
    }
    return best;
  };
  // run() counts 2 x kChains x lanes flops an iteration; each kind gives its own count.
  if (__builtin_cpu_supports("avx512bf16"))
    out.avx512_bf16 = best_of(2 * kChains * 32, chains_avx512_bf16, 20000000);
  if (__builtin_cpu_supports("amx-bf16") && amx_permitted())
    out.amx_bf16 = best_of(2 * 4 * 16 * 16 * 32, chains_amx_bf16, 2000000);
  return out;
}

FmaPeak measure_fma_peak(int threads) {
  struct Kind {
    const char* isa;
    int lanes;
    float (*chains)(int64_t);
    bool supported;
  };
  __builtin_cpu_init();
  const Kind kinds[] = {
      {"avx512", 16, chains_avx512, __builtin_cpu_supports("avx512f") != 0},
      {"avx2+fma", 8, chains_avx2,
       __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0},
      {"scalar", 1, chains_scalar, true},
  };
  FmaPeak best;
  for (const Kind& k : kinds) {
    if (!k.supported) continue;
    run(threads, k.lanes, k.chains, 1000000);  // warm-up: clocks up, threads created once
    for (int attempt = 0; attempt < 3; ++attempt) {
      const double g = run(threads, k.lanes, k.chains, 20000000);
      if (g > best.gflops) best = FmaPeak{g, k.isa};
    }
    if (k.lanes > 1) break;  // the widest supported vectors were measured
  }
  return best;
}
