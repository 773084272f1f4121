// Schedules written by the model: after a subgraph's prompt, the decisions one space at a
// time, each drawn from the model's distribution over the values the space lists as valid
// given the decisions before it (constrained decoding), so every point is valid by
// construction. Streams run in lockstep over a key/value cache that shares the prompt.
#pragma once

#include <cstdint>
#include <vector>

#include "lm/gpt.h"
#include "scheduler/sketch.h"

namespace tlmc::lm {

struct GeneratedPoint {
  scheduler::SpacePoint point;
  double log_likelihood = 0;  // of its decisions under the model (before temperature)
};

struct SampleOptions {
  float temperature = 1.0f;  // the logits are divided by it before the softmax
  int top_k = 0;             // each decision among its k likeliest valid values; 0: all
  uint64_t seed = 1;
};

// Whether the model can write points of these sketches: it knows the name of one of them (a
// model trained before the CUDA words existed knows no CUDA sketch: lm/vocabulary.h; the
// numbers every space lists are known to every model). The functions below require it, and
// write points of the sketches whose names the model knows (a sketch of a rule added since
// it was trained is not its to choose).
bool speaks(const Gpt& model, const scheduler::Sketches& sketches);
// Whether the model knows the name of `sketch`: whether its points are the model's to write.
bool names_sketch(const Gpt& model, const scheduler::Sketch& sketch);

// `n` points drawn from the model (duplicates possible), in the order drawn.
std::vector<GeneratedPoint> sample_points(const Gpt& model, const std::vector<Token>& prompt,
                                          const scheduler::Sketches& sketches, size_t n,
                                          const SampleOptions& options);

// `n` points like `base` (a point of `sketches`), each with one decision redrawn by the
// model: the decisions before one chosen uniformly among those whose space lists another
// value keep base's values, the chosen one is drawn from the model's distribution over its
// other valid values, and each later one keeps base's value where still valid, else the
// valid value nearest to it (SketchCursor::stand_in). Duplicates possible; none when no
// decision has another value or base's sketch does not fit the model's context. The
// log-likelihood is of the whole point.
std::vector<GeneratedPoint> sample_mutations(const Gpt& model, const std::vector<Token>& prompt,
                                             const scheduler::Sketches& sketches,
                                             const scheduler::SpacePoint& base, size_t n,
                                             const SampleOptions& options);

// The most likely points by beam search of `width` per sketch, likeliest first (at most
// `width` of them).
std::vector<GeneratedPoint> beam_search(const Gpt& model, const std::vector<Token>& prompt,
                                        const scheduler::Sketches& sketches, size_t width);

}  // namespace tlmc::lm
