#include "fma_peak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Independent accumulators: enough to cover the FMA latency (4 cycles) times two pipes.
constexpr int kChains = 12;

// Each returns a value derived from the accumulators, so that the loop is not removed.
__attribute__((target("avx512f"))) float chains_avx512(int64_t iterations) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(static_cast<float>(c) * 1e-3F);
  const __m512 a = _mm512_set1_ps(0.999999F), b = _mm512_set1_ps(1e-7F);
  for (int64_t i = 0; i < iterations; ++i)
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

}  // namespace

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
