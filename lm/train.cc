#include "lm/train.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "ir/diagnostic.h"

namespace tlmc::lm {

Batch make_batch(const std::vector<const Sentence*>& sentences) {
  Batch b;
  b.B = static_cast<int>(sentences.size());
  for (const Sentence* s : sentences) b.T = std::max(b.T, static_cast<int>(s->tokens.size()));
  b.tokens.assign(static_cast<size_t>(b.B) * static_cast<size_t>(b.T), Vocabulary::kPad);
  for (size_t i = 0; i < sentences.size(); ++i) {
    const Sentence& s = *sentences[i];
    std::copy(s.tokens.begin(), s.tokens.end(),
              b.tokens.begin() + static_cast<std::ptrdiff_t>(i * b.T));
    // The token at t is predicted from the hidden state at t - 1.
    for (size_t t = 1; t < s.tokens.size(); ++t) {
      const std::vector<Token>& choices = s.choices[t];
      if (choices.empty()) continue;
      const auto answer = std::find(choices.begin(), choices.end(), s.tokens[t]);
      TLMC_ASSERT(answer != choices.end(), "a decision's token is not among its choices");
      b.predictions.push_back(Prediction{static_cast<int>(i * b.T + t - 1), choices,
                                         static_cast<int>(answer - choices.begin())});
    }
  }
  return b;
}

std::vector<std::vector<size_t>> epoch_batches(const std::vector<size_t>& lengths, size_t batch,
                                               uint64_t seed, int64_t epoch) {
  constexpr size_t kWindow = 16;  // batches whose sentences are sorted by length together
  std::vector<size_t> order(lengths.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed * 1000003u + static_cast<uint64_t>(epoch));
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::vector<size_t>> batches;
  for (size_t w = 0; w < order.size(); w += kWindow * batch) {
    const size_t end = std::min(order.size(), w + kWindow * batch);
    std::stable_sort(order.begin() + static_cast<std::ptrdiff_t>(w),
                     order.begin() + static_cast<std::ptrdiff_t>(end),
                     [&](size_t a, size_t b) { return lengths[a] < lengths[b]; });
    for (size_t b = w; b < end; b += batch)
      batches.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(b),
                           order.begin() + static_cast<std::ptrdiff_t>(std::min(end, b + batch)));
  }
  std::shuffle(batches.begin(), batches.end(), rng);
  return batches;
}

float learning_rate_at(const AdamWOptions& o, int64_t step) {
  if (step < o.warmup_steps) return o.learning_rate * static_cast<float>(step + 1) / o.warmup_steps;
  const int64_t decay = std::max<int64_t>(1, o.total_steps - o.warmup_steps);
  const double progress = std::min(1.0, static_cast<double>(step - o.warmup_steps) / decay);
  const double cosine = 0.5 * (1.0 + std::cos(M_PI * progress));
  return o.learning_rate * static_cast<float>(o.final_fraction + (1.0 - o.final_fraction) * cosine);
}

float adamw_step(Gpt& model, AdamWState& state, const AdamWOptions& o) {
  std::vector<float>& p = model.parameters();
  const std::vector<float>& g = model.gradients();
  if (state.m.size() != p.size()) {
    TLMC_ASSERT(state.step == 0, "optimiser state of " << state.m.size() << " for " << p.size());
    state.m.assign(p.size(), 0.0f);
    state.v.assign(p.size(), 0.0f);
  }
  double norm2 = 0;
  for (float x : g) norm2 += static_cast<double>(x) * x;
  const float norm = static_cast<float>(std::sqrt(norm2));
  const float clip = norm > o.clip_norm && norm > 0 ? o.clip_norm / norm : 1.0f;
  const float lr = learning_rate_at(o, state.step);
  ++state.step;
  const float c1 = 1.0f - std::pow(o.beta1, static_cast<float>(state.step));
  const float c2 = 1.0f - std::pow(o.beta2, static_cast<float>(state.step));
  // Decay the weight matrices only (and the token embedding, a matrix tied to the output).
  const GptLayout& l = model.layout();
  auto decayed = [&l](size_t i) {
    return i < l.wpe || (i >= l.qkvw && i < l.qkvb) || (i >= l.attprojw && i < l.attprojb) ||
           (i >= l.fcw && i < l.fcb) || (i >= l.fcprojw && i < l.fcprojb);
  };
  for (size_t i = 0; i < p.size(); ++i) {
    const float grad = g[i] * clip;
    state.m[i] = o.beta1 * state.m[i] + (1 - o.beta1) * grad;
    state.v[i] = o.beta2 * state.v[i] + (1 - o.beta2) * grad * grad;
    const float update = (state.m[i] / c1) / (std::sqrt(state.v[i] / c2) + o.epsilon);
    p[i] -= lr * (update + (decayed(i) ? o.weight_decay * p[i] : 0.0f));
  }
  return norm;
}

}  // namespace tlmc::lm
