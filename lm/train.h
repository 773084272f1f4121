// Training of the decoder: batches of tensor sentences (padded, predictions at decisions),
// and AdamW steps with linear warm-up, cosine decay and clipping of the gradient's norm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "lm/gpt.h"
#include "lm/tensor_sentence.h"

namespace tlmc::lm {

// The sentences as one batch: padded to the longest, a prediction at each decision.
Batch make_batch(const std::vector<const Sentence*>& sentences);

// An epoch's batches of sentences with these token counts, each sentence in one batch of at
// most `batch`, ceil(n / batch) batches, from the seed and the epoch alone: the sentences
// shuffled, each window of 16 batches sorted by length and cut into batches (a batch costs
// as much as its longest sentence, so similar lengths save padding), the batches shuffled.
std::vector<std::vector<size_t>> epoch_batches(const std::vector<size_t>& lengths, size_t batch,
                                               uint64_t seed, int64_t epoch);

struct AdamWOptions {
  float learning_rate = 1e-3f;  // the peak, reached after the warm-up
  float final_fraction = 0.1f;  // of the peak, reached by the cosine decay at the last step
  int64_t warmup_steps = 100;
  int64_t total_steps = 1000;  // the schedule's length
  float beta1 = 0.9f, beta2 = 0.95f, epsilon = 1e-8f;
  float weight_decay = 0.1f;  // on matrices only (not biases, norms or position rows)
  float clip_norm = 1.0f;     // the gradient's global norm is scaled down to at most this
};

// The optimiser's state, saved with the model to resume training.
struct AdamWState {
  int64_t step = 0;  // steps taken
  std::vector<float> m, v;
};

// The learning rate at `step` (0-based) of the schedule.
float learning_rate_at(const AdamWOptions& options, int64_t step);

// One update of the model's parameters from its gradients; returns the gradient's norm
// before clipping.
float adamw_step(Gpt& model, AdamWState& state, const AdamWOptions& options);

}  // namespace tlmc::lm
