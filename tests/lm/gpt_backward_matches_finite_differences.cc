// The decoder's backward pass against central finite differences of its loss, for every
// parameter tensor, on a tiny model with sentences of different lengths (padded).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "lm/gpt.h"

namespace tlmc::lm {
namespace {

Batch tiny_batch() {
  Batch b;
  b.B = 2;
  b.T = 7;
  b.tokens = {1, 5, 9, 3, 12, 7, 2,   // a full sentence
              1, 4, 4, 8, 2,  0, 0};  // a shorter one, padded
  // Predictions: the next token among a few choices (rows are b * T + t).
  b.predictions = {{0, {9, 10, 11}, 0},     {2, {3, 12, 13, 14}, 1}, {4, {7, 8}, 0},
                   {5, {2, 3, 4, 5, 6}, 0}, {7, {4, 5}, 0},          {9, {8, 15, 16}, 0},
                   {10, {2, 3}, 0}};
  return b;
}

TEST(Gpt, BackwardMatchesFiniteDifferencesForEveryParameterTensor) {
  const GptConfig config{20, 8, 8, 2, 2};
  Gpt model(config, 7);
  // Larger weights than GPT-2's initialisation, so that every path carries signal.
  for (float& p : model.parameters()) p *= 3.0f;
  const Batch batch = tiny_batch();
  model.zero_gradients();
  model.forward(batch);
  model.backward();
  const std::vector<float> analytic = model.gradients();

  const GptLayout& l = model.layout();
  const std::vector<std::pair<const char*, size_t>> tensors = {
      {"wte", l.wte},           {"wpe", l.wpe},           {"ln1w", l.ln1w},
      {"ln1b", l.ln1b},         {"qkvw", l.qkvw},         {"qkvb", l.qkvb},
      {"attprojw", l.attprojw}, {"attprojb", l.attprojb}, {"ln2w", l.ln2w},
      {"ln2b", l.ln2b},         {"fcw", l.fcw},           {"fcb", l.fcb},
      {"fcprojw", l.fcprojw},   {"fcprojb", l.fcprojb},   {"lnfw", l.lnfw},
      {"lnfb", l.lnfb},         {"end", l.total}};
  std::mt19937_64 rng(3);
  for (size_t k = 0; k + 1 < tensors.size(); ++k) {
    const size_t begin = tensors[k].second, end = tensors[k + 1].second;
    double largest = 0;
    int compared = 0;
    for (int draw = 0; draw < 24; ++draw) {
      const size_t i = begin + rng() % (end - begin);
      float& p = model.parameters()[i];
      const float saved = p, eps = 4e-3f;
      p = saved + eps;
      const double up = model.forward(batch);
      p = saved - eps;
      const double down = model.forward(batch);
      p = saved;
      const double numeric = (up - down) / (2 * eps);
      largest = std::max(largest, std::abs(numeric));
      EXPECT_NEAR(analytic[i], numeric, 2e-3 + 0.03 * std::abs(numeric))
          << tensors[k].first << "[" << i - begin << "]";
      ++compared;
    }
    // A tensor whose every sampled gradient is zero would check nothing.
    EXPECT_GT(largest, 1e-3) << tensors[k].first << ": no gradient among " << compared;
  }
}

TEST(Gpt, PaddingAfterASentenceDoesNotChangeItsLoss) {
  const GptConfig config{20, 8, 8, 2, 2};
  Gpt model(config, 11);
  Batch one;
  one.B = 1;
  one.T = 5;
  one.tokens = {1, 4, 4, 8, 2};
  one.predictions = {{0, {4, 5}, 0}, {2, {8, 15, 16}, 0}, {3, {2, 3}, 0}};
  Batch padded = one;
  padded.T = 8;
  padded.tokens = {1, 4, 4, 8, 2, 0, 0, 0};
  EXPECT_FLOAT_EQ(model.forward(one), model.forward(padded));
}

}  // namespace
}  // namespace tlmc::lm
