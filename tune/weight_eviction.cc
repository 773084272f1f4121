#include "tune/weight_eviction.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace tlmc::tune {
namespace {

constexpr size_t kLine = 64;

// What the fault handler sees: the protected pages and a flag a page each. Set up before
// the handler is installed and torn down after it is removed; the handler only reads the
// bounds and stores flags (lock-free atomics, safe in a signal handler).
struct Protected {
  char* first = nullptr;  // the first page
  size_t pages = 0;
  std::unique_ptr<std::atomic<uint8_t>[]> read;
};
std::vector<Protected>* g_protected = nullptr;
struct sigaction g_previous {};
size_t g_page = 4096;

void on_fault(int signo, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const uintptr_t at = reinterpret_cast<uintptr_t>(info->si_addr);
  for (Protected& p : *g_protected) {
    const uintptr_t first = reinterpret_cast<uintptr_t>(p.first);
    if (!p.first || at < first || at >= first + p.pages * g_page) continue;
    const size_t i = (at - first) / g_page;
    p.read[i].store(1, std::memory_order_relaxed);
    if (mprotect(p.first + i * g_page, g_page, PROT_READ | PROT_WRITE) != 0) {
      // Each page made readable alone is a mapping of its own, and their number is bounded
      // (vm.max_map_count): past it, the whole weight is counted as read and made readable
      // in one call, which merges its mappings.
      for (size_t k = 0; k < p.pages; ++k) p.read[k].store(1, std::memory_order_relaxed);
      mprotect(p.first, p.pages * g_page, PROT_READ | PROT_WRITE);
    }
    errno = saved_errno;
    return;  // the access is retried and now succeeds
  }
  // Not ours: the candidate's own crash. Fault again under the action it had before.
  sigaction(SIGSEGV, &g_previous, nullptr);
  errno = saved_errno;
  (void)signo, (void)context;
}

bool has_clflushopt() {
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23));
#else
  return false;
#endif
}

__attribute__((target("clflushopt"))) void flush_lines_opt(const char* data, size_t size) {
#if defined(__x86_64__)
  for (size_t i = 0; i < size; i += kLine) _mm_clflushopt(const_cast<char*>(data + i));
  if (size > 0) _mm_clflushopt(const_cast<char*>(data + size - 1));
#else
  (void)data, (void)size;
#endif
}

void flush_lines(const char* data, size_t size) {
#if defined(__x86_64__)
  for (size_t i = 0; i < size; i += kLine) _mm_clflush(data + i);
  if (size > 0) _mm_clflush(data + size - 1);
#else
  (void)data, (void)size;
#endif
}

}  // namespace

ReadRanges whole_weights(const std::vector<std::pair<const char*, size_t>>& weights) {
  ReadRanges out;
  for (const auto& [data, size] : weights) out.push_back({{0, size}});
  return out;
}

ReadRanges learn_reads(const std::vector<std::pair<const char*, size_t>>& weights,
                       const std::function<void()>& run) {
  g_page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<Protected> pages(weights.size());
  for (size_t w = 0; w < weights.size(); ++w) {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(weights[w].first);
    const uintptr_t first = (begin + g_page - 1) / g_page * g_page;
    const uintptr_t end = (begin + weights[w].second) / g_page * g_page;
    if (end <= first) continue;
    pages[w].first = const_cast<char*>(weights[w].first) + (first - begin);
    pages[w].pages = (end - first) / g_page;
    pages[w].read = std::make_unique<std::atomic<uint8_t>[]>(pages[w].pages);
    for (size_t i = 0; i < pages[w].pages; ++i) pages[w].read[i].store(0);
  }
  g_protected = &pages;
  struct sigaction action {};
  action.sa_sigaction = on_fault;
  action.sa_flags = SA_SIGINFO;
  sigemptyset(&action.sa_mask);
  sigaction(SIGSEGV, &action, &g_previous);
  for (const Protected& p : pages)
    if (p.pages) mprotect(p.first, p.pages * g_page, PROT_NONE);
  run();
  for (const Protected& p : pages)
    if (p.pages) mprotect(p.first, p.pages * g_page, PROT_READ | PROT_WRITE);
  sigaction(SIGSEGV, &g_previous, nullptr);
  g_protected = nullptr;

  ReadRanges out(weights.size());
  for (size_t w = 0; w < weights.size(); ++w) {
    const size_t size = weights[w].second;
    const Protected& p = pages[w];
    if (!p.pages) {
      out[w].push_back({0, size});
      continue;
    }
    auto add = [&](size_t from, size_t to) {  // merges with the range before when adjacent
      if (from >= to) return;
      if (!out[w].empty() && out[w].back().second == from)
        out[w].back().second = to;
      else
        out[w].push_back({from, to});
    };
    const size_t first = static_cast<size_t>(p.first - weights[w].first);
    add(0, first);  // the partial first page, never protected
    for (size_t i = 0; i < p.pages; ++i)
      if (p.read[i].load()) add(first + i * g_page, first + (i + 1) * g_page);
    add(first + p.pages * g_page, size);  // the partial last page
  }
  return out;
}

size_t read_bytes(const ReadRanges& ranges) {
  size_t total = 0;
  for (const auto& weight : ranges)
    for (const auto& [from, to] : weight) total += to - from;
  return total;
}

void evict(const std::vector<std::pair<const char*, size_t>>& weights, const ReadRanges& ranges) {
  static const bool opt = has_clflushopt();
  for (size_t w = 0; w < weights.size() && w < ranges.size(); ++w)
    for (const auto& [from, to] : ranges[w]) {
      if (opt)
        flush_lines_opt(weights[w].first + from, to - from);
      else
        flush_lines(weights[w].first + from, to - from);
    }
#if defined(__x86_64__)
  _mm_mfence();  // clflushopt is ordered by a fence only
#endif
}

}  // namespace tlmc::tune
