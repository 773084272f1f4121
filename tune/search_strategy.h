// Search strategies behind one interface: each proposes batches of points of a subgraph's
// sketches (a sketch, one value per space, every value listed by the space) and learns from what
// was measured. Random sampling is the baseline; the evolutionary search is guided by a learned
// cost model that all the tasks of a run share. The language model proposes from what it
// learnt offline.
#pragma once

#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ir/target.h"
#include "ir/te.h"
#include "lm/gpt.h"
#include "scheduler/sketch.h"
#include "tune/cost_model.h"
#include "tune/measurer.h"

namespace tlmc::tune {

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string_view name() const = 0;
  // Up to `n` new points, none already proposed or observed.
  virtual std::vector<scheduler::SpacePoint> propose(size_t n) = 0;
  // What a point measured (also for points measured in an earlier run, read back).
  virtual void observe(const scheduler::SpacePoint& point, const MeasureResult& result) = 0;
  // Of the points proposed, those drawn uniformly where the strategy's own way wrote no new
  // one (the model search's, when the model keeps writing points already seen): a figure of
  // the model's is not the model's where these are among its points.
  virtual int64_t uniform_fill() const { return 0; }
};

// Adds to `out` uniformly drawn points not in `seen` (and adds them to it) until `out` holds
// `n`, or new points are too rare to find (a small space).
void add_random_points(const scheduler::Sketches& sketches, std::mt19937_64& rng,
                       std::set<scheduler::SpacePoint>& seen, size_t n,
                       std::vector<scheduler::SpacePoint>& out);

// Uniform sampling from the spaces (each value drawn among those valid at its point).
std::unique_ptr<SearchStrategy> make_random_search(const scheduler::Sketches& sketches,
                                                   uint64_t seed);

struct EvolutionOptions {
  size_t population = 128;         // points per generation
  int generations = 4;             // of mutation and selection per round
  double random_fraction = 0.15;   // of each round's proposals drawn at random (exploration)
  size_t confident_samples = 128;  // the task's measured points before that fraction is reached
};

// Evolution of a population by mutations inside the spaces, selected by `model`'s score of
// each point's loop nest; random points until the model has learnt from enough
// measurements. Measurements observed are added to `model` as samples of `task`. With
// `seeding` (the language model's search), its proposals stand in for the random points.
std::unique_ptr<SearchStrategy> make_evolutionary_search(
    const scheduler::Sketches& sketches, const ir::Target& target, CostModel& model, int task,
    EvolutionOptions options, uint64_t seed, std::unique_ptr<SearchStrategy> seeding = nullptr);

struct ModelSearchOptions {
  const lm::Gpt* model = nullptr;   // the language model (lm/), not owned
  size_t candidates_per_trial = 4;  // points sampled per point to propose
  float temperature = 1.0f;         // of the first draw (later draws of a round are hotter)
  int top_k = 0;                    // each decision among its k likeliest values; 0: all
  // Of each round, the share of points that are the model's mutations of the fastest
  // points measured so far (lm::sample_mutations) instead of new samples.
  double mutation_fraction = 0.5;
};

// The language model's proposals (lm/generate.h): its beam-search point first, then the
// likeliest new points of each sample of `candidates_per_trial` times the points wanted,
// a `mutation_fraction` of each round the likeliest of as many of the model's mutations of
// the fastest points measured; uniform samples when the model keeps repeating points
// already seen.
std::unique_ptr<SearchStrategy> make_model_search(const scheduler::Sketches& sketches,
                                                  const ir::TeProgram& program,
                                                  const ir::Target& target,
                                                  const ModelSearchOptions& options, uint64_t seed);

}  // namespace tlmc::tune
