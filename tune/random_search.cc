// Random search: points drawn uniformly, space by space, never the same point twice.
#include <set>

#include "tune/search_strategy.h"

namespace tlmc::tune {
namespace {

class RandomSearch : public SearchStrategy {
 public:
  RandomSearch(const scheduler::Sketches& sketches, uint64_t seed)
      : sketches_(sketches), rng_(seed) {}
  std::string_view name() const override { return "random"; }
  std::vector<scheduler::SpacePoint> propose(size_t n) override {
    std::vector<scheduler::SpacePoint> out;
    add_random_points(sketches_, rng_, seen_, n, out);
    return out;
  }
  void observe(const scheduler::SpacePoint& point, const MeasureResult&) override {
    seen_.insert(point);
  }

 private:
  const scheduler::Sketches& sketches_;
  std::mt19937_64 rng_;
  std::set<scheduler::SpacePoint> seen_;
};

}  // namespace

void add_random_points(const scheduler::Sketches& sketches, std::mt19937_64& rng,
                       std::set<scheduler::SpacePoint>& seen, size_t n,
                       std::vector<scheduler::SpacePoint>& out) {
  // A small space runs out of new points: give up after many repeats in a row.
  for (size_t misses = 0; out.size() < n && misses < 64 * n + 64;) {
    scheduler::SpacePoint v = scheduler::random_point(sketches, rng);
    if (seen.insert(v).second) {
      out.push_back(std::move(v));
      misses = 0;
    } else {
      ++misses;
    }
  }
}

std::unique_ptr<SearchStrategy> make_random_search(const scheduler::Sketches& sketches,
                                                   uint64_t seed) {
  return std::make_unique<RandomSearch>(sketches, seed);
}

}  // namespace tlmc::tune
