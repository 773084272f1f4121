// Search by the language model: its likeliest point first (the -O1 schedule), with the
// default point of each sketch it cannot name, its mutations of the fastest points measured (from
// the first round on, the -O0 schedule being measured before it), then points it samples, the
// likeliest new ones of each draw measured first. The mutations let measurements steer what the
// model writes where it is wrong: on a depthwise convolution, its samples all ran slower than the
// -O0 schedule.
#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "lm/generate.h"
#include "lm/tensor_sentence.h"
#include "scheduler/sketch.h"
#include "tune/search_strategy.h"

namespace tlmc::tune {
namespace {

// Draws per round before a model that keeps writing points already seen is helped out by
// uniform sampling (a confident model on a small space).
constexpr int kDrawsPerRound = 3;
// The fastest measured points a round mutates, in turn.
constexpr size_t kMutatedPoints = 3;

class ModelSearch : public SearchStrategy {
 public:
  ModelSearch(const scheduler::Sketches& sketches, std::vector<lm::Token> prompt,
              const ModelSearchOptions& options, uint64_t seed)
      : sketches_(sketches), prompt_(std::move(prompt)), options_(options), rng_(seed) {}
  std::string_view name() const override { return "model"; }

  std::vector<scheduler::SpacePoint> propose(size_t n) override {
    std::vector<scheduler::SpacePoint> out;
    if (!beam_done_) {
      beam_done_ = true;
      take_likeliest(lm::beam_search(*options_.model, prompt_, sketches_, 1), n, out);
      // A sketch the model cannot name (of a rule added since it was trained) is not its to
      // write: its default point is measured in the first round instead, and uniform draws
      // reach its other points.
      for (size_t k = 0; k < sketches_.size() && out.size() < n; ++k) {
        scheduler::SpacePoint p{k, scheduler::default_values(sketches_[k])};
        if (!lm::names_sketch(*options_.model, sketches_[k]) && seen_.insert(p).second)
          out.push_back(std::move(p));
      }
    }
    // The tuner measures the -O0 schedule before the first round: from then on a part of
    // each round mutates the fastest points measured.
    add_mutations(
        std::min(n - out.size(), static_cast<size_t>(std::lround(static_cast<double>(n) *
                                                                 options_.mutation_fraction))),
        out);
    for (int draw = 0; draw < kDrawsPerRound && out.size() < n; ++draw) {
      const size_t want = (n - out.size()) * options_.candidates_per_trial;
      lm::SampleOptions sample{options_.temperature * (1.0f + 0.5f * static_cast<float>(draw)),
                               options_.top_k, rng_()};
      take_likeliest(lm::sample_points(*options_.model, prompt_, sketches_, want, sample), n, out);
    }
    const size_t drawn = out.size();
    add_random_points(sketches_, rng_, seen_, n, out);
    uniform_ += static_cast<int64_t>(out.size() - drawn);
    return out;
  }

  int64_t uniform_fill() const override { return uniform_; }

  void observe(const scheduler::SpacePoint& point, const MeasureResult& result) override {
    seen_.insert(point);
    // What mutations start from (the evolutionary search's seeding mutates nothing).
    if (options_.mutation_fraction > 0 && result.status == scheduler::MeasureStatus::Ok &&
        result.seconds > 0)
      measured_.emplace_back(result.seconds, point);
  }

 private:
  // Up to `count` new points into `out`: of each of the fastest measured points
  // (kMutatedPoints of them, in turn) its share of `count`, the likeliest new ones of the
  // model's mutations of it, `candidates_per_trial` drawn per point wanted. Shares, not one
  // ranking of all: the model likes mutations of its own points best, and the fastest
  // point may be one it does not like (the -O0 schedule, far ahead of its samples).
  void add_mutations(size_t count, std::vector<scheduler::SpacePoint>& out) {
    if (count == 0 || measured_.empty()) return;
    std::sort(measured_.begin(), measured_.end());
    const size_t bases = std::min(kMutatedPoints, measured_.size());
    for (size_t b = 0; b < bases; ++b) {
      const size_t share = count / bases + (b < count % bases ? 1 : 0);
      take_likeliest(
          lm::sample_mutations(*options_.model, prompt_, sketches_, measured_[b].second,
                               share * options_.candidates_per_trial,
                               lm::SampleOptions{options_.temperature, options_.top_k, rng_()}),
          out.size() + share, out);
    }
  }

  // The likeliest of `drawn` not yet seen into `out` (and `seen_`), until it holds `limit`.
  void take_likeliest(std::vector<lm::GeneratedPoint> drawn, size_t limit,
                      std::vector<scheduler::SpacePoint>& out) {
    std::stable_sort(drawn.begin(), drawn.end(),
                     [](const lm::GeneratedPoint& a, const lm::GeneratedPoint& b) {
                       return a.log_likelihood > b.log_likelihood;
                     });
    for (lm::GeneratedPoint& g : drawn)
      if (out.size() < limit && seen_.insert(g.point).second) out.push_back(std::move(g.point));
  }

  const scheduler::Sketches& sketches_;
  std::vector<lm::Token> prompt_;
  ModelSearchOptions options_;
  std::mt19937_64 rng_;
  std::set<scheduler::SpacePoint> seen_;
  std::vector<std::pair<double, scheduler::SpacePoint>> measured_;  // seconds, point
  bool beam_done_ = false;
  int64_t uniform_ = 0;  // points add_random_points gave
};

}  // namespace

std::unique_ptr<SearchStrategy> make_model_search(const scheduler::Sketches& sketches,
                                                  const ir::TeProgram& program,
                                                  const ir::Target& target,
                                                  const ModelSearchOptions& options,
                                                  uint64_t seed) {
  return std::make_unique<ModelSearch>(sketches, lm::prompt_tokens(program, target), options, seed);
}

}  // namespace tlmc::tune
