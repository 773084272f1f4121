// Search by the language model: its likeliest point first (the -O1 schedule), then points
// it samples, the likeliest new ones of each draw measured first.
#include <algorithm>
#include <set>

#include "lm/generate.h"
#include "lm/tensor_sentence.h"
#include "tune/search_strategy.h"

namespace tlmc::tune {
namespace {

// Draws per round before a model that keeps writing points already seen is helped out by
// uniform sampling (a confident model on a small space).
constexpr int kDrawsPerRound = 3;

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
      for (lm::GeneratedPoint& g : lm::beam_search(*options_.model, prompt_, sketches_, 1))
        if (out.size() < n && seen_.insert(g.point).second) out.push_back(std::move(g.point));
    }
    for (int draw = 0; draw < kDrawsPerRound && out.size() < n; ++draw) {
      const size_t want = (n - out.size()) * options_.candidates_per_trial;
      lm::SampleOptions sample{options_.temperature * (1.0f + 0.5f * static_cast<float>(draw)),
                               options_.top_k, rng_()};
      std::vector<lm::GeneratedPoint> drawn =
          lm::sample_points(*options_.model, prompt_, sketches_, want, sample);
      std::stable_sort(drawn.begin(), drawn.end(),
                       [](const lm::GeneratedPoint& a, const lm::GeneratedPoint& b) {
                         return a.log_likelihood > b.log_likelihood;
                       });
      for (lm::GeneratedPoint& g : drawn)
        if (out.size() < n && seen_.insert(g.point).second) out.push_back(std::move(g.point));
    }
    add_random_points(sketches_, rng_, seen_, n, out);
    return out;
  }

  void observe(const scheduler::SpacePoint& point, const MeasureResult&) override {
    seen_.insert(point);
  }

 private:
  const scheduler::Sketches& sketches_;
  std::vector<lm::Token> prompt_;
  ModelSearchOptions options_;
  std::mt19937_64 rng_;
  std::set<scheduler::SpacePoint> seen_;
  bool beam_done_ = false;
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
