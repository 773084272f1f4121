// Search strategies behind one interface: each proposes batches of points of a sketch's
// spaces (one value per space, every value listed by the space) and learns from what was
// measured. Random sampling is the baseline; the evolutionary search with a learned cost
// model comes next.
#pragma once

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "scheduler/sketch.h"
#include "tune/measurer.h"

namespace tlmc::tune {

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string_view name() const = 0;
  // Up to `n` new points, none already proposed or observed.
  virtual std::vector<std::vector<int64_t>> propose(size_t n) = 0;
  // What a point measured (also for points measured in an earlier run, read back).
  virtual void observe(const std::vector<int64_t>& values, const MeasureResult& result) = 0;
};

// Uniform sampling from the spaces (each value drawn among those valid at its point).
std::unique_ptr<SearchStrategy> make_random_search(const scheduler::Sketch& sketch, uint64_t seed);

}  // namespace tlmc::tune
