// Random search: points drawn uniformly, space by space, never the same point twice.
#include <set>

#include "tune/search_strategy.h"

namespace tlmc::tune {
namespace {

class RandomSearch : public SearchStrategy {
 public:
  RandomSearch(const scheduler::Sketch& sketch, uint64_t seed) : sketch_(sketch), rng_(seed) {}
  std::string_view name() const override { return "random"; }
  std::vector<std::vector<int64_t>> propose(size_t n) override {
    std::vector<std::vector<int64_t>> out;
    // A small space runs out of new points: give up after many repeats in a row.
    for (size_t misses = 0; out.size() < n && misses < 64 * n + 64;) {
      std::vector<int64_t> v = scheduler::random_values(sketch_, rng_);
      if (seen_.insert(v).second) {
        out.push_back(std::move(v));
        misses = 0;
      } else {
        ++misses;
      }
    }
    return out;
  }
  void observe(const std::vector<int64_t>& values, const MeasureResult&) override {
    seen_.insert(values);
  }

 private:
  const scheduler::Sketch& sketch_;
  std::mt19937_64 rng_;
  std::set<std::vector<int64_t>> seen_;
};

}  // namespace

std::unique_ptr<SearchStrategy> make_random_search(const scheduler::Sketch& sketch, uint64_t seed) {
  return std::make_unique<RandomSearch>(sketch, seed);
}

}  // namespace tlmc::tune
