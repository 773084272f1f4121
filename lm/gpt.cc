#include "lm/gpt.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "ir/diagnostic.h"
#include "lm/gpt_kernels.h"

namespace tlmc::lm {
namespace {

// Tensors laid out one after another in one block: each take() returns where one starts.
struct BlockOffsets {
  size_t total = 0;
  size_t take(size_t n) {
    total += n;
    return total - n;
  }
};

}  // namespace

GptLayout::GptLayout(const GptConfig& c) {
  const size_t V = static_cast<size_t>(c.vocab), T = static_cast<size_t>(c.context),
               C = static_cast<size_t>(c.channels), L = static_cast<size_t>(c.layers);
  BlockOffsets block;
  auto take = [&block](size_t n) { return block.take(n); };
  wte = take(V * C);
  wpe = take(T * C);
  ln1w = take(L * C);
  ln1b = take(L * C);
  qkvw = take(L * 3 * C * C);
  qkvb = take(L * 3 * C);
  attprojw = take(L * C * C);
  attprojb = take(L * C);
  ln2w = take(L * C);
  ln2b = take(L * C);
  fcw = take(L * 4 * C * C);
  fcb = take(L * 4 * C);
  fcprojw = take(L * C * 4 * C);
  fcprojb = take(L * C);
  lnfw = take(C);
  lnfb = take(C);
  total = block.total;
}

Gpt with_whole_vocabulary(const Gpt& model) {
  GptConfig c = model.config();
  const size_t old_vocab = static_cast<size_t>(c.vocab), C = static_cast<size_t>(c.channels);
  c.vocab = static_cast<int>(Vocabulary::get().size());
  const GptLayout from = model.layout(), to(c);
  const std::vector<float>& p = model.parameters();
  std::vector<float> out(to.total);
  std::copy(p.begin() + static_cast<std::ptrdiff_t>(from.wte),
            p.begin() + static_cast<std::ptrdiff_t>(from.wte + old_vocab * C),
            out.begin() + static_cast<std::ptrdiff_t>(to.wte));
  const size_t unk = from.wte + static_cast<size_t>(Vocabulary::kUnk) * C;
  for (size_t t = old_vocab; t < static_cast<size_t>(c.vocab); ++t)
    std::copy(p.begin() + static_cast<std::ptrdiff_t>(unk),
              p.begin() + static_cast<std::ptrdiff_t>(unk + C),
              out.begin() + static_cast<std::ptrdiff_t>(to.wte + t * C));
  // Everything after the token embedding, in the same order.
  std::copy(p.begin() + static_cast<std::ptrdiff_t>(from.wpe), p.end(),
            out.begin() + static_cast<std::ptrdiff_t>(to.wpe));
  return Gpt(c, std::move(out));
}

// The activations of one forward pass over [B, T], in one block.
struct Gpt::Activations {
  Activations(const GptConfig& c, int B, int T) {
    const size_t N = static_cast<size_t>(B) * static_cast<size_t>(T),
                 C = static_cast<size_t>(c.channels), L = static_cast<size_t>(c.layers),
                 H = static_cast<size_t>(c.heads), TT = static_cast<size_t>(T);
    BlockOffsets block;
    auto take = [&block](size_t n) { return block.take(n); };
    encoded = take(N * C);
    ln1 = take(L * N * C);
    ln1_mean = take(L * N);
    ln1_rstd = take(L * N);
    qkv = take(L * N * 3 * C);
    att = take(L * static_cast<size_t>(B) * H * TT * TT);
    atty = take(L * N * C);
    residual2 = take(L * N * C);
    ln2 = take(L * N * C);
    ln2_mean = take(L * N);
    ln2_rstd = take(L * N);
    fch = take(L * N * 4 * C);
    fch_gelu = take(L * N * 4 * C);
    residual3 = take(L * N * C);
    lnf = take(N * C);
    lnf_mean = take(N);
    lnf_rstd = take(N);
    total = block.total;
  }
  size_t encoded;                  // [N, C]   token + position embeddings
  size_t ln1, ln1_mean, ln1_rstd;  // [L, N, C], [L, N], [L, N]
  size_t qkv;                      // [L, N, 3C]
  size_t att;                      // [L, B, H, T, T]  softmax of the scores (causal)
  size_t atty;                     // [L, N, C]  attention output, before the projection
  size_t residual2;                // [L, N, C]  stream after attention
  size_t ln2, ln2_mean, ln2_rstd;  // [L, N, C], [L, N], [L, N]
  size_t fch, fch_gelu;            // [L, N, 4C]
  size_t residual3;                // [L, N, C]  stream after the MLP
  size_t lnf, lnf_mean, lnf_rstd;  // [N, C], [N], [N]
  size_t total;
};

Gpt::Gpt(const GptConfig& config, uint64_t seed) : config_(config), layout_(config) {
  TLMC_ASSERT(config.channels % config.heads == 0,
              "channels " << config.channels << " not a multiple of heads " << config.heads);
  params_.assign(layout_.total, 0.0f);
  grads_.assign(layout_.total, 0.0f);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  const float residual_scale = 1.0f / std::sqrt(2.0f * static_cast<float>(config.layers));
  const size_t C = static_cast<size_t>(config.channels), L = static_cast<size_t>(config.layers);
  auto fill = [&](size_t at, size_t n, float scale) {
    for (size_t i = 0; i < n; ++i) params_[at + i] = normal(rng) * scale;
  };
  auto ones = [&](size_t at, size_t n) { std::fill_n(params_.begin() + at, n, 1.0f); };
  fill(layout_.wte, layout_.wpe - layout_.wte, 1.0f);
  fill(layout_.wpe, layout_.ln1w - layout_.wpe, 1.0f);
  ones(layout_.ln1w, L * C);
  fill(layout_.qkvw, L * 3 * C * C, 1.0f);
  fill(layout_.attprojw, L * C * C, residual_scale);
  ones(layout_.ln2w, L * C);
  fill(layout_.fcw, L * 4 * C * C, 1.0f);
  fill(layout_.fcprojw, L * C * 4 * C, residual_scale);
  ones(layout_.lnfw, C);
}

Gpt::Gpt(const GptConfig& config, std::vector<float> parameters)
    : config_(config), layout_(config), params_(std::move(parameters)) {
  TLMC_ASSERT(params_.size() == layout_.total,
              "parameters: " << params_.size() << " values for " << layout_.total);
  grads_.assign(layout_.total, 0.0f);
}

void Gpt::zero_gradients() { std::fill(grads_.begin(), grads_.end(), 0.0f); }

float Gpt::forward(const Batch& batch) {
  const int B = batch.B, T = batch.T, C = config_.channels, L = config_.layers, H = config_.heads;
  TLMC_ASSERT(T <= config_.context, "sentence of " << T << " tokens, context " << config_.context);
  TLMC_ASSERT(batch.tokens.size() == static_cast<size_t>(B) * static_cast<size_t>(T),
              "batch of " << batch.tokens.size() << " tokens for " << B << "x" << T);
  for (const Prediction& pr : batch.predictions)
    for (Token t : pr.choices)
      TLMC_ASSERT(t >= 0 && t < config_.vocab, "choice " << t << " beyond the model's vocabulary");
  batch_ = batch;
  for (Token& t : batch_.tokens) t = known_token(t);
  const Activations a(config_, B, T);
  acts_.assign(a.total, 0.0f);
  const size_t N = static_cast<size_t>(B) * static_cast<size_t>(T), Cs = static_cast<size_t>(C);
  float* acts = acts_.data();
  const float* p = params_.data();
  const GptLayout& w = layout_;

  encode(acts + a.encoded, batch_.tokens.data(), p + w.wte, p + w.wpe, B, T, C);
  const float* residual = acts + a.encoded;  // [N, C]
  for (int l = 0; l < L; ++l) {
    const size_t lc = static_cast<size_t>(l) * Cs, lnc = static_cast<size_t>(l) * N * Cs;
    float* ln1 = acts + a.ln1 + lnc;      // [N, C]
    float* qkv = acts + a.qkv + 3 * lnc;  // [N, 3C]
    float* att = acts + a.att +
                 static_cast<size_t>(l) * static_cast<size_t>(B * H) * static_cast<size_t>(T) *
                     static_cast<size_t>(T);
    float* atty = acts + a.atty + lnc;              // [N, C]
    float* residual2 = acts + a.residual2 + lnc;    // [N, C]
    float* ln2 = acts + a.ln2 + lnc;                // [N, C]
    float* fch = acts + a.fch + 4 * lnc;            // [N, 4C]
    float* fch_gelu = acts + a.fch_gelu + 4 * lnc;  // [N, 4C]
    float* residual3 = acts + a.residual3 + lnc;    // [N, C]
    layernorm_forward(ln1, acts + a.ln1_mean + static_cast<size_t>(l) * N,
                      acts + a.ln1_rstd + static_cast<size_t>(l) * N, residual, p + w.ln1w + lc,
                      p + w.ln1b + lc, N, C);
    matmul_forward(qkv, ln1, p + w.qkvw + 3 * lc * Cs, p + w.qkvb + 3 * lc, N, C, 3 * C);
    attention_forward(atty, att, qkv, B, T, C, H);
    matmul_forward(residual2, atty, p + w.attprojw + lc * Cs, p + w.attprojb + lc, N, C, C);
    add_inplace(residual2, residual, N * Cs);
    layernorm_forward(ln2, acts + a.ln2_mean + static_cast<size_t>(l) * N,
                      acts + a.ln2_rstd + static_cast<size_t>(l) * N, residual2, p + w.ln2w + lc,
                      p + w.ln2b + lc, N, C);
    matmul_forward(fch, ln2, p + w.fcw + 4 * lc * Cs, p + w.fcb + 4 * lc, N, C, 4 * C);
    gelu_forward(fch_gelu, fch, N * 4 * Cs);
    matmul_forward(residual3, fch_gelu, p + w.fcprojw + 4 * lc * Cs, p + w.fcprojb + lc, N, 4 * C,
                   C);
    add_inplace(residual3, residual2, N * Cs);
    residual = residual3;
  }
  layernorm_forward(acts + a.lnf, acts + a.lnf_mean, acts + a.lnf_rstd, residual, p + w.lnfw,
                    p + w.lnfb, N, C);

  // The loss: at each prediction, a softmax over the logits of its choices alone.
  probs_.assign(batch.predictions.size(), {});
  double loss = 0;
  for (size_t i = 0; i < batch.predictions.size(); ++i) {
    const Prediction& pr = batch.predictions[i];
    TLMC_ASSERT(pr.row >= 0 && static_cast<size_t>(pr.row) < N && pr.answer >= 0 &&
                    static_cast<size_t>(pr.answer) < pr.choices.size(),
                "prediction " << i << " out of the batch");
    probs_[i] = choice_probabilities(acts + a.lnf + static_cast<size_t>(pr.row) * Cs, p + w.wte,
                                     pr.choices, C);
    loss -= std::log(std::max(probs_[i][static_cast<size_t>(pr.answer)], 1e-30f));
  }
  return batch.predictions.empty() ? 0.0f : static_cast<float>(loss / batch.predictions.size());
}

void Gpt::backward() {
  const Batch& batch = batch_;
  const int B = batch.B, T = batch.T, C = config_.channels, L = config_.layers, H = config_.heads;
  const Activations a(config_, B, T);
  TLMC_ASSERT(acts_.size() == a.total, "backward() without its forward()");
  const size_t N = static_cast<size_t>(B) * static_cast<size_t>(T), Cs = static_cast<size_t>(C);
  const float* acts = acts_.data();
  const float* p = params_.data();
  float* g = grads_.data();
  const GptLayout& w = layout_;

  // Gradients of the activations, as needed: the stream's and one block's scratch.
  std::vector<float> dlnf(N * Cs, 0.0f), dresidual(N * Cs, 0.0f);
  const float scale = batch.predictions.empty() ? 0.0f : 1.0f / batch.predictions.size();
  for (size_t i = 0; i < batch.predictions.size(); ++i) {
    const Prediction& pr = batch.predictions[i];
    choice_backward(dlnf.data() + static_cast<size_t>(pr.row) * Cs, g + w.wte,
                    acts + a.lnf + static_cast<size_t>(pr.row) * Cs, p + w.wte, pr.choices,
                    probs_[i], pr.answer, scale, C);
  }
  const float* last_residual =
      L > 0 ? acts + a.residual3 + static_cast<size_t>(L - 1) * N * Cs : acts + a.encoded;
  layernorm_backward(dresidual.data(), g + w.lnfw, g + w.lnfb, dlnf.data(), last_residual,
                     p + w.lnfw, acts + a.lnf_mean, acts + a.lnf_rstd, N, C);

  std::vector<float> dln(N * Cs), dqkv(N * 3 * Cs), datty(N * Cs), dfch(N * 4 * Cs),
      dfch_gelu(N * 4 * Cs), dresidual2(N * Cs);
  const size_t att_per_layer =
      static_cast<size_t>(B * H) * static_cast<size_t>(T) * static_cast<size_t>(T);
  std::vector<float> datt(att_per_layer);
  for (int l = L - 1; l >= 0; --l) {
    const size_t lc = static_cast<size_t>(l) * Cs, lnc = static_cast<size_t>(l) * N * Cs;
    const float* residual =
        l == 0 ? acts + a.encoded : acts + a.residual3 + static_cast<size_t>(l - 1) * N * Cs;
    const float* ln1 = acts + a.ln1 + lnc;
    const float* qkv = acts + a.qkv + 3 * lnc;
    const float* att = acts + a.att + static_cast<size_t>(l) * att_per_layer;
    const float* atty = acts + a.atty + lnc;
    const float* residual2 = acts + a.residual2 + lnc;
    const float* ln2 = acts + a.ln2 + lnc;
    const float* fch = acts + a.fch + 4 * lnc;
    const float* fch_gelu = acts + a.fch_gelu + 4 * lnc;

    // residual3 = residual2 + fcproj(gelu(fc(ln2(residual2)))): dresidual flows to both.
    std::copy(dresidual.begin(), dresidual.end(), dresidual2.begin());
    std::fill(dfch_gelu.begin(), dfch_gelu.end(), 0.0f);
    matmul_backward(dfch_gelu.data(), g + w.fcprojw + 4 * lc * Cs, g + w.fcprojb + lc,
                    dresidual.data(), fch_gelu, p + w.fcprojw + 4 * lc * Cs, N, 4 * C, C);
    std::fill(dfch.begin(), dfch.end(), 0.0f);
    gelu_backward(dfch.data(), fch, dfch_gelu.data(), N * 4 * Cs);
    std::fill(dln.begin(), dln.end(), 0.0f);
    matmul_backward(dln.data(), g + w.fcw + 4 * lc * Cs, g + w.fcb + 4 * lc, dfch.data(), ln2,
                    p + w.fcw + 4 * lc * Cs, N, C, 4 * C);
    layernorm_backward(dresidual2.data(), g + w.ln2w + lc, g + w.ln2b + lc, dln.data(), residual2,
                       p + w.ln2w + lc, acts + a.ln2_mean + static_cast<size_t>(l) * N,
                       acts + a.ln2_rstd + static_cast<size_t>(l) * N, N, C);

    // residual2 = residual + attproj(attention(qkv(ln1(residual)))).
    std::copy(dresidual2.begin(), dresidual2.end(), dresidual.begin());
    std::fill(datty.begin(), datty.end(), 0.0f);
    matmul_backward(datty.data(), g + w.attprojw + lc * Cs, g + w.attprojb + lc, dresidual2.data(),
                    atty, p + w.attprojw + lc * Cs, N, C, C);
    std::fill(dqkv.begin(), dqkv.end(), 0.0f);
    attention_backward(dqkv.data(), datt.data(), datty.data(), qkv, att, B, T, C, H);
    std::fill(dln.begin(), dln.end(), 0.0f);
    matmul_backward(dln.data(), g + w.qkvw + 3 * lc * Cs, g + w.qkvb + 3 * lc, dqkv.data(), ln1,
                    p + w.qkvw + 3 * lc * Cs, N, C, 3 * C);
    layernorm_backward(dresidual.data(), g + w.ln1w + lc, g + w.ln1b + lc, dln.data(), residual,
                       p + w.ln1w + lc, acts + a.ln1_mean + static_cast<size_t>(l) * N,
                       acts + a.ln1_rstd + static_cast<size_t>(l) * N, N, C);
  }
  encode_backward(g + w.wte, g + w.wpe, dresidual.data(), batch_.tokens.data(), B, T, C);
}

}  // namespace tlmc::lm
