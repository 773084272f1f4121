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

void gelu_forward(float* out, const float* inp, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float x = inp[i];
    out[i] = 0.5f * x * (1.0f + std::tanh(kGeluScale * (x + 0.044715f * x * x * x)));
  }
}

void gelu_backward(float* dinp, const float* inp, const float* dout, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float x = inp[i];
    const float th = std::tanh(kGeluScale * (x + 0.044715f * x * x * x));
    const float sech2 = 1.0f - th * th;
    const float local =
        0.5f * (1.0f + th) + 0.5f * x * sech2 * kGeluScale * (1.0f + 3.0f * 0.044715f * x * x);
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
