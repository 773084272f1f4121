// The decoder's layers as plain functions over row-major float arrays (llm.c's shapes), each
// forward beside its backward; the matrix products go through CBLAS. Backward functions add
// to the gradients they are given.
#pragma once

#include <cstddef>
#include <vector>

#include "lm/vocabulary.h"

namespace tlmc::lm {

// out[b,t,:] = wte[tokens[b,t],:] + wpe[t,:]            out [B*T, C]
void encode(float* out, const Token* tokens, const float* wte, const float* wpe, int B, int T,
            int C);
void encode_backward(float* dwte, float* dwpe, const float* dout, const Token* tokens, int B, int T,
                     int C);

// out = (inp - mean) * rstd * weight + bias, per row      inp, out [N, C]; mean, rstd [N]
void layernorm_forward(float* out, float* mean, float* rstd, const float* inp, const float* weight,
                       const float* bias, size_t N, int C);
void layernorm_backward(float* dinp, float* dweight, float* dbias, const float* dout,
                        const float* inp, const float* weight, const float* mean, const float* rstd,
                        size_t N, int C);

// While one lives, the matrix products run on the calling thread alone. Decoding's products
// are small (a few streams by the channels): OpenBLAS's threads cost more than they gave,
// and between products they wait spinning on sched_yield, taking a core from whatever else
// runs. Sampling 10000 points of a 2-layer model on a 2-core AMD EPYC (Zen 4) took 125 s of
// wall and 187 s of CPU time with its threads, 103 s and 103 s without. Not thread-safe
// (OpenBLAS's thread count is the process's): decoding runs on one thread.
class SerialProducts {
 public:
  SerialProducts();
  ~SerialProducts();
  SerialProducts(const SerialProducts&) = delete;
  SerialProducts& operator=(const SerialProducts&) = delete;

 private:
  int saved_;
};

// out = inp · weightᵀ + bias          inp [N, IC], weight [OC, IC], bias [OC], out [N, OC]
void matmul_forward(float* out, const float* inp, const float* weight, const float* bias, size_t N,
                    int IC, int OC);
void matmul_backward(float* dinp, float* dweight, float* dbias, const float* dout, const float* inp,
                     const float* weight, size_t N, int IC, int OC);

// Causal multi-head attention: qkv [B*T, 3C] (q, k, v side by side, heads of C/H channels
// within each), att [B, H, T, T] the softmax of the scaled scores (zero above the diagonal),
// out [B*T, C].
void attention_forward(float* out, float* att, const float* qkv, int B, int T, int C, int H);
// datt: scratch of att's size.
void attention_backward(float* dqkv, float* datt, const float* dout, const float* qkv,
                        const float* att, int B, int T, int C, int H);

// Decoding's attention for one head: each of S query rows attends to the P positions of a
// prefix that all share, then to its own positions after them (own[s] of them, own_k[s] and
// own_v[s]). Rows of the heads' slices: q rows ldq apart, keys and values C apart (a [T, C]
// cache with the head's offset applied). out[s] [hs] rows C apart; scores: scratch.
struct CachedHead {
  const float* q;
  size_t ldq;
  const float* prefix_k = nullptr;
  const float* prefix_v = nullptr;
  size_t prefix_length;
  std::vector<const float*> own_k, own_v;
  std::vector<size_t> own_length;
  size_t C;
  int hs;
};
void cached_attention_forward(float* out, const CachedHead& head, std::vector<float>& scores);

// GELU, tanh approximation, element-wise over n values.
void gelu_forward(float* out, const float* inp, size_t n);
void gelu_backward(float* dinp, const float* inp, const float* dout, size_t n);

void add_inplace(float* out, const float* inp, size_t n);

// The softmax over the logits of `choices` alone (the hidden state hidden [C] against their
// rows of the tied embedding wte [V, C]).
std::vector<float> choice_probabilities(const float* hidden, const float* wte,
                                        const std::vector<Token>& choices, int C);
// The gradient of scale · -log(probs[answer]) into dhidden [C] and dwte's rows of the choices.
void choice_backward(float* dhidden, float* dwte, const float* hidden, const float* wte,
                     const std::vector<Token>& choices, const std::vector<float>& probs, int answer,
                     float scale, int C);

}  // namespace tlmc::lm
