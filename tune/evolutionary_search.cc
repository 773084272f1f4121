// Evolutionary search guided by the cost model (Ansor's, on tlmc's spaces): a population
// seeded with the best measured points and random ones evolves for a few generations by
// mutations that stay inside the spaces, each point scored by the model from the features
// of its lowered loop nest; a round proposes the best-scored new points, and a few random
// ones so that the model keeps seeing what it does not yet know. Seeded (-O3 with the
// language model), the points that would be random are the seeding strategy's instead.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "scheduler/lower_schedule.h"
#include "tune/loop_features.h"
#include "tune/search_strategy.h"

namespace tlmc::tune {
namespace {

using scheduler::SpacePoint;
using Point = SpacePoint;

// Successful measurements of a task's own points before the model guides its search.
constexpr size_t kOwnSamples = 8;

class EvolutionarySearch : public SearchStrategy {
 public:
  EvolutionarySearch(const scheduler::Sketches& sketches, const ir::Target& target,
                     CostModel& model, int task, EvolutionOptions options, uint64_t seed,
                     std::unique_ptr<SearchStrategy> seeding)
      : sketches_(sketches),
        target_(target),
        model_(model),
        task_(task),
        options_(options),
        rng_(seed),
        seeding_(std::move(seeding)) {}

  std::string_view name() const override { return "evolutionary"; }

  std::vector<Point> propose(size_t n) override {
    model_.train();
    std::vector<Point> out;
    // The model guides a task once it has seen measurements of this task's own points: a
    // model trained on other subgraphs alone (or on baselines alone) cannot rank these.
    if (model_.ready() && measured_.size() >= kOwnSamples) {
      out = best_predicted(n - std::min(n, random_share(n)));
    } else if (!seeding_ && is_new(default_point())) {
      // Before the model can tell: the default point (the -O0 policy's values), then
      // random points.
      out.push_back(default_point());
      proposed_.insert(out.back());
    }
    // Random (or seeding) points: all of them until the model can tell, a share after.
    if (seeding_ && out.size() < n)
      for (Point& p : seeding_->propose(n - out.size()))
        if (is_new(p)) {
          proposed_.insert(p);
          out.push_back(std::move(p));
        }
    add_random_points(sketches_, rng_, proposed_, n, out);
    return out;
  }

  void observe(const Point& values, const MeasureResult& result) override {
    proposed_.insert(values);
    if (seeding_) seeding_->observe(values, result);
    const double seconds = result.status == scheduler::MeasureStatus::Ok ? result.seconds : 0;
    if (seconds > 0) measured_.emplace_back(seconds, values);
    model_.add(task_, features(values), seconds);
  }

 private:
  // Random points in a round: most of it while the model has seen few of this task's
  // points (it then ranks them no better than chance), down to random_fraction once it has
  // seen options_.confident_samples.
  size_t random_share(size_t n) const {
    const double seen = static_cast<double>(measured_.size());
    const double fraction = std::max(options_.random_fraction,
                                     1 - seen / static_cast<double>(options_.confident_samples));
    return static_cast<size_t>(std::lround(static_cast<double>(n) * fraction));
  }

  bool is_new(const Point& p) const { return proposed_.count(p) == 0; }

  Point default_point() const { return Point{0, scheduler::default_values(sketches_[0])}; }

  // The features of a point, computed once.
  const std::vector<float>& features(const Point& p) {
    auto it = features_.find(p);
    if (it != features_.end()) return it->second;
    scheduler::SketchCursor c(sketches_[p.sketch]);
    for (int64_t v : p.values) c.choose(v);
    const ir::LoopProgram loops = scheduler::lower_schedule(c.run().state, "candidate");
    return features_.emplace(p, loop_features(loops, target_)).first->second;
  }

  std::vector<float> score(const std::vector<Point>& points) {
    std::vector<std::vector<float>> rows;
    rows.reserve(points.size());
    for (const Point& p : points) rows.push_back(features(p));
    return model_.predict(rows);
  }

  // A point like `p` with one space re-drawn: the spaces before it keep their values, the
  // chosen one takes another of its valid values, and each later one keeps its value when it
  // is still valid, else takes the valid value nearest to it.
  Point mutate(const Point& p) {
    if (p.values.empty()) return p;
    const size_t at = std::uniform_int_distribution<size_t>(0, p.values.size() - 1)(rng_);
    scheduler::SketchCursor c(sketches_[p.sketch]);
    for (size_t i = 0; i < p.values.size(); ++i) {
      const std::vector<int64_t>& valid = c.valid_values();
      if (i == at) {
        c.choose(valid[std::uniform_int_distribution<size_t>(0, valid.size() - 1)(rng_)]);
        continue;
      }
      c.choose(c.stand_in(p.values[i]));
    }
    return Point{p.sketch, c.run().values};
  }

  // Draws an index with probability proportional to its score (floored, so that a point
  // the model rates 0 can still be picked).
  size_t pick(const std::vector<float>& scores) {
    std::vector<double> w;
    for (float s : scores) w.push_back(std::max(1e-3, static_cast<double>(s)));
    return std::discrete_distribution<size_t>(w.begin(), w.end())(rng_);
  }

  std::vector<Point> best_predicted(size_t n) {
    if (n == 0) return {};
    // The first generation: the default point, the best measured points, then random ones.
    std::vector<Point> population = {default_point()};
    std::sort(measured_.begin(), measured_.end());
    for (size_t i = 0; i < measured_.size() && population.size() < options_.population / 4; ++i)
      population.push_back(measured_[i].second);
    while (population.size() < options_.population)
      population.push_back(scheduler::random_point(sketches_, rng_));
    // Every new point met on the way, with its score.
    std::map<Point, float> found;
    for (int g = 0;; ++g) {
      const std::vector<float> scores = score(population);
      for (size_t i = 0; i < population.size(); ++i)
        if (is_new(population[i])) found[population[i]] = scores[i];
      if (g == options_.generations) break;
      std::vector<Point> next;
      for (size_t i = 0; i < options_.population; ++i)
        next.push_back(mutate(population[pick(scores)]));
      population = std::move(next);
    }
    // Best score first; equal scores in random order (not the points' order, which would
    // favour small tiles).
    std::vector<std::tuple<float, uint64_t, Point>> ranked;
    for (auto& [p, s] : found) ranked.emplace_back(-s, rng_(), p);
    std::sort(ranked.begin(), ranked.end());
    std::vector<Point> out;
    for (size_t i = 0; i < ranked.size() && out.size() < n; ++i) {
      proposed_.insert(std::get<2>(ranked[i]));
      out.push_back(std::get<2>(ranked[i]));
    }
    return out;
  }

  const scheduler::Sketches& sketches_;
  const ir::Target target_;
  CostModel& model_;
  const int task_;
  const EvolutionOptions options_;
  std::mt19937_64 rng_;
  std::set<Point> proposed_;                        // proposed or observed: never again
  std::vector<std::pair<double, Point>> measured_;  // seconds, point: the ones that ran
  std::map<Point, std::vector<float>> features_;
  std::unique_ptr<SearchStrategy> seeding_;  // nullptr: random points
};

}  // namespace

std::unique_ptr<SearchStrategy> make_evolutionary_search(const scheduler::Sketches& sketches,
                                                         const ir::Target& target, CostModel& model,
                                                         int task, EvolutionOptions options,
                                                         uint64_t seed,
                                                         std::unique_ptr<SearchStrategy> seeding) {
  return std::make_unique<EvolutionarySearch>(sketches, target, model, task, options, seed,
                                              std::move(seeding));
}

}  // namespace tlmc::tune
