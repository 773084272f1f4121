#include "lm/gpt_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>

namespace tlmc::lm {
namespace {

constexpr float kGeluScale = 0.7978845608028654f;  // sqrt(2 / pi)

}  // namespace

void encode(float* out, const Token* tokens, const float* wte, const float* wpe, int B, int T,
            int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      float* o = out + (static_cast<size_t>(b) * T + t) * C;
      const float* e = wte + static_cast<size_t>(tokens[b * T + t]) * C;
      const float* p = wpe + static_cast<size_t>(t) * C;
      for (int i = 0; i < C; ++i) o[i] = e[i] + p[i];
    }
}

void encode_backward(float* dwte, float* dwpe, const float* dout, const Token* tokens, int B, int T,
                     int C) {
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t) {
      const float* d = dout + (static_cast<size_t>(b) * T + t) * C;
      float* de = dwte + static_cast<size_t>(tokens[b * T + t]) * C;
      float* dp = dwpe + static_cast<size_t>(t) * C;
      for (int i = 0; i < C; ++i) {
        de[i] += d[i];
        dp[i] += d[i];
      }
    }
}

void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, size_t N, int C) {
  for (size_t n = 0; n < N; ++n) {
    const float* x = inp + n * C;
    float m = 0;
    for (int i = 0; i < C; ++i) m += x[i];
    m /= C;
    float v = 0;
    for (int i = 0; i < C; ++i) v += (x[i] - m) * (x[i] - m);
    v /= C;
    const float s = 1.0f / std::sqrt(v + 1e-5f);
    float* o = out + n * C;
    for (int i = 0; i < C; ++i) o[i] = (x[i] - m) * s * weight[i] + bias[i];
    mean[n] = m;
    rstd[n] = s;
  }
}

void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* weight, const float* mean, const float* rstd,
                        size_t N, int C) {
  for (size_t n = 0; n < N; ++n) {
    const float* d = dout + n * C;
    const float* x = inp + n * C;
    float* dx = dinp + n * C;
    const float m = mean[n], s = rstd[n];
    float dnorm_mean = 0, dnorm_norm_mean = 0;
    for (int i = 0; i < C; ++i) {
      const float norm = (x[i] - m) * s;
      const float dnorm = weight[i] * d[i];
      dnorm_mean += dnorm;
      dnorm_norm_mean += dnorm * norm;
    }
    dnorm_mean /= C;
    dnorm_norm_mean /= C;
    for (int i = 0; i < C; ++i) {
      const float norm = (x[i] - m) * s;
      const float dnorm = weight[i] * d[i];
      dbias[i] += d[i];
      dweight[i] += norm * d[i];
      dx[i] += (dnorm - dnorm_mean - norm * dnorm_norm_mean) * s;
    }
  }
}

SerialProducts::SerialProducts() : saved_(openblas_get_num_threads()) {
  if (saved_ != 1) openblas_set_num_threads(1);
}

SerialProducts::~SerialProducts() {
  if (saved_ != 1) openblas_set_num_threads(saved_);
}

void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, size_t N,
                    int IC, int OC) {
  for (size_t n = 0; n < N; ++n) std::copy(bias, bias + OC, out + n * OC);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(N), OC, IC, 1.0f, inp, IC,
              weight, IC, 1.0f, out, OC);
}

void cached_attention_forward(float* out, const CachedHead& h, std::vector<float>& scores) {
  const size_t S = h.own_length.size(), P = h.prefix_length;
  const size_t T = P + *std::max_element(h.own_length.begin(), h.own_length.end());
  const float scale = 1.0f / std::sqrt(static_cast<float>(h.hs));
  const int ldq = static_cast<int>(h.ldq), ldc = static_cast<int>(h.C), ldt = static_cast<int>(T);
  scores.resize(S * T);
  // The prefix, for every row at once: scores[s, :P] = q[s] · prefix_kᵀ * scale.
  if (P > 0)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(S), static_cast<int>(P),
                h.hs, scale, h.q, ldq, h.prefix_k, ldc, 0.0f, scores.data(), ldt);
  for (size_t s = 0; s < S; ++s) {
    float* row = scores.data() + s * T;
    const size_t n = P + h.own_length[s];
    if (h.own_length[s] > 0)
      cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(h.own_length[s]), h.hs, scale,
                  h.own_k[s], ldc, h.q + s * h.ldq, 1, 0.0f, row + P, 1);
    const float top = *std::max_element(row, row + n);
    float sum = 0;
    for (size_t t = 0; t < n; ++t) sum += row[t] = std::exp(row[t] - top);
    const float inverse = 1.0f / sum;
    for (size_t t = 0; t < n; ++t) row[t] *= inverse;
    std::fill(out + s * h.C, out + s * h.C + h.hs, 0.0f);
  }
  // out[s] = scores[s, :P] · prefix_v + scores[s, P:] · own_v[s].
  if (P > 0)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(S), h.hs,
                static_cast<int>(P), 1.0f, scores.data(), ldt, h.prefix_v, ldc, 0.0f, out, ldc);
  for (size_t s = 0; s < S; ++s)
    if (h.own_length[s] > 0)
      cblas_sgemv(CblasRowMajor, CblasTrans, static_cast<int>(h.own_length[s]), h.hs, 1.0f,
                  h.own_v[s], ldc, scores.data() + s * T + P, 1, 1.0f, out + s * h.C, 1);
}

void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, size_t N, int IC, int OC) {
  const int rows = static_cast<int>(N);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, IC, OC, 1.0f, dout, OC, weight, IC,
              1.0f, dinp, IC);
  cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, OC, IC, rows, 1.0f, dout, OC, inp, IC, 1.0f,
              dweight, IC);
  for (size_t n = 0; n < N; ++n)
    for (int o = 0; o < OC; ++o) dbias[o] += dout[n * OC + o];
}

void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int H) {
  const int hs = C / H;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const float* q = qkv + static_cast<size_t>(b) * T * 3 * C + h * hs;  // [T, hs], ld 3C
      const float* k = q + C;
      const float* v = q + 2 * C;
      float* s = att + (static_cast<size_t>(b) * H + h) * T * T;  // [T, T]
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, scale, q, 3 * C, k, 3 * C,
                  0.0f, s, T);
      for (int t = 0; t < T; ++t) {
        float* row = s + static_cast<size_t>(t) * T;
        const float top = *std::max_element(row, row + t + 1);
        float sum = 0;
        for (int u = 0; u <= t; ++u) sum += row[u] = std::exp(row[u] - top);
        for (int u = 0; u <= t; ++u) row[u] /= sum;
        std::fill(row + t + 1, row + T, 0.0f);
      }
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, 1.0f, s, T, v, 3 * C, 0.0f,
                  out + static_cast<size_t>(b) * T * C + h * hs, C);
    }
}

void attention_backward(float* dqkv, float* datt, const float* dout, const float* qkv,
                        const float* att, int B, int T, int C, int H) {
  const int hs = C / H;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hs));
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const size_t at = static_cast<size_t>(b) * T * 3 * C + h * hs;
      const float *q = qkv + at, *k = q + C, *v = q + 2 * C;
      float *dq = dqkv + at, *dk = dq + C, *dv = dq + 2 * C;
      const float* d = dout + static_cast<size_t>(b) * T * C + h * hs;  // [T, hs], ld C
      const float* s = att + (static_cast<size_t>(b) * H + h) * T * T;
      float* ds = datt + (static_cast<size_t>(b) * H + h) * T * T;
      // out = s · v
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, hs, 1.0f, d, C, v, 3 * C, 0.0f, ds,
                  T);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, 1.0f, s, T, d, C, 1.0f, dv,
                  3 * C);
      // s = softmax(scores) per row: dscore = s * (ds - sum(s * ds))
      for (int t = 0; t < T; ++t) {
        const float* srow = s + static_cast<size_t>(t) * T;
        float* drow = ds + static_cast<size_t>(t) * T;
        float dot = 0;
        for (int u = 0; u <= t; ++u) dot += srow[u] * drow[u];
        for (int u = 0; u <= t; ++u) drow[u] = srow[u] * (drow[u] - dot);
        std::fill(drow + t + 1, drow + T, 0.0f);
      }
      // scores = scale · q · kᵀ
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, hs, T, scale, ds, T, k, 3 * C, 1.0f,
                  dq, 3 * C);
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, T, hs, T, scale, ds, T, q, 3 * C, 1.0f,
                  dk, 3 * C);
    }
}

namespace {

// 0.5 (1 + tanh(u)) written as the logistic function of 2u: one exp instead of a tanh (which
// costs several times more, and was a sixth of decoding's time), without the cancellation
// of 1 - 2 / (1 + exp(2u)) near zero.
float gelu_gate(float x) {
  const float u = kGeluScale * (x + 0.044715f * x * x * x);
  return 1.0f / (1.0f + std::exp(-2.0f * u));
}

}  // namespace

void gelu_forward(float* out, const float* inp, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = inp[i] * gelu_gate(inp[i]);
}

void gelu_backward(float* dinp, const float* inp, const float* dout, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    // d/dx x g(u) = g + x g (1 - g) 2 du/dx, g the gate (1 - tanh^2 = 4 g (1 - g)).
    const float x = inp[i], g = gelu_gate(x);
    const float local =
        g + 2.0f * x * g * (1.0f - g) * kGeluScale * (1.0f + 3.0f * 0.044715f * x * x);
    dinp[i] += local * dout[i];
  }
}

void add_inplace(float* out, const float* inp, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] += inp[i];
}

std::vector<float> choice_probabilities(const float* hidden, const float* wte,
                                        const std::vector<Token>& choices, int C) {
  std::vector<float> p(choices.size());
  for (size_t j = 0; j < choices.size(); ++j)
    p[j] = cblas_sdot(C, hidden, 1, wte + static_cast<size_t>(choices[j]) * C, 1);
  const float top = p.empty() ? 0.0f : *std::max_element(p.begin(), p.end());
  float sum = 0;
  for (float& x : p) sum += x = std::exp(x - top);
  for (float& x : p) x /= sum;
  return p;
}

void choice_backward(float* dhidden, float* dwte, const float* hidden, const float* wte,
                     const std::vector<Token>& choices, const std::vector<float>& probs, int answer,
                     float scale, int C) {
  for (size_t j = 0; j < choices.size(); ++j) {
    const float dlogit = scale * (probs[j] - (static_cast<int>(j) == answer ? 1.0f : 0.0f));
    const float* e = wte + static_cast<size_t>(choices[j]) * C;
    float* de = dwte + static_cast<size_t>(choices[j]) * C;
    for (int i = 0; i < C; ++i) {
      dhidden[i] += dlogit * e[i];
      de[i] += dlogit * hidden[i];
    }
  }
}

}  // namespace tlmc::lm
