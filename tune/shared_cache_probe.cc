#include "tune/shared_cache_probe.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

namespace tlmc::tune {
namespace {

constexpr int64_t kSmallest = int64_t{4} << 20;
constexpr int64_t kMemory = int64_t{256} << 20;  // read from memory on any machine of today
constexpr double kFaster = 1.5;
constexpr int kReads = 5;  // of each size

// Bytes per second of `threads` threads reading [data, data + bytes) in equal parts, all
// starting each read together: the best read but the first (which fills the caches).
double read_bandwidth(const uint64_t* data, int64_t bytes, int threads) {
  const int64_t words = bytes / 8;
  std::vector<double> seconds(static_cast<size_t>(threads) * kReads);
  std::vector<std::atomic<int>> arrived(kReads);
  std::vector<uint64_t> sums(static_cast<size_t>(threads) * 8);  // a cache line each
  auto read = [&](int t) {
    const int64_t begin = words * t / threads, end = words * (t + 1) / threads;
    uint64_t s = 0;
    for (int r = 0; r < kReads; ++r) {
      arrived[static_cast<size_t>(r)].fetch_add(1);
      while (arrived[static_cast<size_t>(r)].load() < threads) {
      }
      const auto t0 = std::chrono::steady_clock::now();
      for (int64_t i = begin; i < end; ++i) s += data[i];
      seconds[static_cast<size_t>(t) * kReads + static_cast<size_t>(r)] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    sums[static_cast<size_t>(t) * 8] = s;
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(read, t);
  read(0);
  for (std::thread& t : pool) t.join();
  double best = 0;
  for (int r = 1; r < kReads; ++r) {
    double slowest = 1e-9;
    for (int t = 0; t < threads; ++t)
      slowest =
          std::max(slowest, seconds[static_cast<size_t>(t) * kReads + static_cast<size_t>(r)]);
    best = std::max(best, static_cast<double>(bytes) / slowest);
  }
  return best;
}

}  // namespace

int64_t measure_shared_cache_bytes(int threads) {
  threads = std::max(1, threads);
  std::unique_ptr<uint64_t, decltype(&std::free)> data(
      static_cast<uint64_t*>(std::aligned_alloc(64, static_cast<size_t>(kMemory))), &std::free);
  if (!data) return 0;
  for (int64_t i = 0; i < kMemory / 8; ++i) data.get()[i] = static_cast<uint64_t>(i);
  const double memory = read_bandwidth(data.get(), kMemory, threads);
  int64_t cached = 0;
  for (int64_t bytes = kSmallest; bytes < kMemory; bytes *= 2)
    if (read_bandwidth(data.get(), bytes, threads) >= kFaster * memory) cached = bytes;
  return cached;
}

}  // namespace tlmc::tune
