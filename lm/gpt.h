// A GPT-style decoder (token and position embeddings, pre-norm blocks of causal
// self-attention and an MLP, a final norm, the output tied to the token embedding), with
// its forward and backward pass over a batch of sentences. The loss is taken at decisions
// only, over the tokens valid there: the model learns to choose among valid values.
#pragma once

#include <cstdint>
#include <vector>

#include "lm/vocabulary.h"

namespace tlmc::lm {

struct GptConfig {
  int vocab = 0;     // tokens
  int context = 0;   // longest sentence, in tokens (the position embedding's rows)
  int channels = 0;  // width of the residual stream
  int layers = 0;    // blocks
  int heads = 0;     // attention heads per block; channels is a multiple of it
  // The model's sentences are CUDA targets' (it knows the CUDA words among its first `vocab`
  // tokens), else CPU targets' only (lm/vocabulary.h, KnownWords).
  bool cuda = false;
  // The tokens a model of this configuration knows: its vocabulary's, less the CUDA words
  // for a CPU model.
  KnownWords known_words() const { return {static_cast<size_t>(vocab), cuda}; }
  bool operator==(const GptConfig& o) const {
    return vocab == o.vocab && context == o.context && channels == o.channels &&
           layers == o.layers && heads == o.heads && cuda == o.cuda;
  }
};

// Where each parameter tensor lives in the one block of parameters (and of gradients).
struct GptLayout {
  explicit GptLayout(const GptConfig& c);
  size_t wte, wpe;            // [V, C], [maxT, C]
  size_t ln1w, ln1b;          // [L, C]
  size_t qkvw, qkvb;          // [L, 3C, C], [L, 3C]
  size_t attprojw, attprojb;  // [L, C, C], [L, C]
  size_t ln2w, ln2b;          // [L, C]
  size_t fcw, fcb;            // [L, 4C, C], [L, 4C]
  size_t fcprojw, fcprojb;    // [L, C, 4C], [L, C]
  size_t lnfw, lnfb;          // [C]
  size_t total;               // parameters in all
};

// One prediction the loss is taken at: the hidden state of `row` (b * T + t) predicts the
// token at t + 1, which must be choices[answer].
struct Prediction {
  int row = 0;
  std::vector<Token> choices;
  int answer = 0;
};

// Sentences padded to one length: tokens [B, T], and the predictions the loss averages.
struct Batch {
  int B = 0, T = 0;
  std::vector<Token> tokens;
  std::vector<Prediction> predictions;
};

class Gpt;
// The same model knowing every token of this tlmc's language (of its kind, KnownWords): the
// rows of the words it lacked start as copies of <unk>'s, as it has read them so far, so
// that it computes what it computed before until it is trained on them.
Gpt with_whole_vocabulary(const Gpt& model);

class Gpt {
 public:
  // Random weights as GPT-2 initialises them (normal, 0.02; residual projections scaled
  // down by the depth), from `seed`.
  Gpt(const GptConfig& config, uint64_t seed);
  // Given weights (a checkpoint's): `parameters` has GptLayout(config).total values.
  Gpt(const GptConfig& config, std::vector<float> parameters);

  const GptConfig& config() const { return config_; }
  KnownWords known_words() const { return config_.known_words(); }
  // The token as the model reads it: <unk> for one it does not know (a word the language
  // gained after the model was trained: lm/vocabulary.h).
  Token known_token(Token t) const { return known_words().has(t) ? t : Vocabulary::kUnk; }
  const GptLayout& layout() const { return layout_; }
  std::vector<float>& parameters() { return params_; }
  const std::vector<float>& parameters() const { return params_; }
  std::vector<float>& gradients() { return grads_; }

  // The mean loss of the batch's predictions (-log of the answer's probability among the
  // choices); keeps the activations for backward().
  float forward(const Batch& batch);
  // Adds the gradient of the last forward()'s loss to gradients().
  void backward();
  void zero_gradients();

 private:
  GptConfig config_;
  GptLayout layout_;
  std::vector<float> params_, grads_;
  struct Activations;
  std::vector<float> acts_;                // the last forward's activations, one block
  Batch batch_;                            // the last forward's
  std::vector<std::vector<float>> probs_;  // per prediction, over its choices
};

}  // namespace tlmc::lm
