// bench_kernels: GFLOP/s of tlmc's generated kernels on the workloads W1-W6 of
// bench/README.md, on U1-U9 (shapes outside that list, taken from ResNet-50, MobileNetV2
// and BERT-base) and O1-O2 (products with odd extents), beside oneDNN's primitives for the
// same computation, measured in the same run on the same inputs. A benchmark, not a test: it
// prints a table (see bench/README.md) and exits non-zero only when the two disagree or
// something fails to run. Built with TLMC_BENCH_BF16 (bench_kernels_bf16), it times tlmc's
// --precision bf16 libraries beside oneDNN in bf16 and tlmc's float32 libraries instead.
//
// The tlmc side is the libraries bench/CMakeLists.txt generates from bench/workloads/*.yaml
// (libw1.a ... libo2.a, C prefixes w1 ... o2; libw1_bf16.a ..., prefixes w1_bf16 ... in
// bf16). Their weights are `init:
// {uniform: ...}` random weights; make_uniform() below reproduces tlmc's generator
// (docs/graph-format.md, "Random initialisation is the same everywhere") so that oneDNN gets the
// same bytes. The seeds and ranges here must match the YAML files; a mismatch shows as a failed
// comparison.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#ifdef TLMC_BENCH_HAVE_OPENMP
#include <omp.h>
#endif
#ifdef TLMC_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "fma_peak.h"
#include "o1.h"
#include "o2.h"
#include "tlmc_bench_target.h"  // TLMC_BENCH_TARGET: the target tlmc compiled the libraries for
#include "u1.h"
#include "u2.h"
#include "u3.h"
#include "u4.h"
#include "u5.h"
#include "u6.h"
#include "u7.h"
#include "u8.h"
#include "u9.h"
#include "w1.h"
#include "w2.h"
#include "w3.h"
#include "w4.h"
#include "w5.h"
#include "w6.h"
#ifdef TLMC_BENCH_BF16
#include "o1_bf16.h"
#include "o2_bf16.h"
#include "u1_bf16.h"
#include "u2_bf16.h"
#include "u3_bf16.h"
#include "u4_bf16.h"
#include "u5_bf16.h"
#include "u6_bf16.h"
#include "u7_bf16.h"
#include "u8_bf16.h"
#include "u9_bf16.h"
#include "w1_bf16.h"
#include "w2_bf16.h"
#include "w3_bf16.h"
#include "w4_bf16.h"
#include "w5_bf16.h"
#include "w6_bf16.h"
#endif

namespace {

using dnnl::memory;
using Clock = std::chrono::steady_clock;
using Dims = memory::dims;
using Tag = memory::format_tag;

// ---------------------------------------------------------------------------------------
// Data

// A float buffer, 64-byte aligned, zero-filled.
class Buffer {
 public:
  explicit Buffer(size_t n)
      : n_(n), p_(static_cast<float*>(std::aligned_alloc(64, (n * 4 + 63) / 64 * 64))) {
    if (!p_) throw std::runtime_error("out of memory");
    std::memset(p_, 0, n * 4);
  }
  ~Buffer() { std::free(p_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  float* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  size_t n_;
  float* p_;
};

// tlmc's random initialisation: splitmix64 from `seed`, u = (next() >> 11) * 2^-53,
// element = fma(hi - lo, u, lo) in double, rounded to float.
std::shared_ptr<Buffer> make_uniform(size_t n, uint64_t seed, double lo, double hi) {
  auto b = std::make_shared<Buffer>(n);
  uint64_t state = seed;
  for (size_t i = 0; i < n; ++i) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    const double u = static_cast<double>(z >> 11) * 0x1p-53;
    b->data()[i] = static_cast<float>(std::fma(hi - lo, u, lo));
  }
  return b;
}

// The layout of `md` in oneDNN's notation: the dimensions from outermost to innermost,
// a blocked one in capitals, then the inner blocks ("aBcd16b": NCHW with 16-channel blocks).
std::string format_of(const memory::desc& md) {
  const dnnl_memory_desc_t& d = md.data;
  if (d.format_kind != dnnl_blocked) return "non-blocked";
  const dnnl_blocking_desc_t& blk = d.format_desc.blocking;
  std::vector<int> order(d.ndims);
  for (int i = 0; i < d.ndims; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return blk.strides[x] > blk.strides[y]; });
  std::string s;
  for (int i : order) {
    bool blocked = false;
    for (int k = 0; k < blk.inner_nblks; ++k) blocked = blocked || blk.inner_idxs[k] == i;
    s += static_cast<char>((blocked ? 'A' : 'a') + i);
  }
  for (int k = 0; k < blk.inner_nblks; ++k)
    s += std::to_string(blk.inner_blks[k]) + static_cast<char>('a' + blk.inner_idxs[k]);
  return s;
}

// ---------------------------------------------------------------------------------------
// tlmc

struct TlmcModel {
  const char* name;
  size_t (*workspace_size)(void);
  int (*run)(const void* const*, void* const*, void*);
  void (*set_num_threads)(int);
};
#define TLMC_MODEL(n) \
  TlmcModel { #n, n##_workspace_size, n##_run, n##_set_num_threads }
// A workload's float32 library and, in bench_kernels_bf16, its --precision bf16 one.
struct TlmcModels {
  TlmcModel fp32, bf16;
};
#ifdef TLMC_BENCH_BF16
#define TLMC_MODELS(n) \
  TlmcModels { TLMC_MODEL(n), TLMC_MODEL(n##_bf16) }
#else
#define TLMC_MODELS(n)          \
  TlmcModels {                  \
    TLMC_MODEL(n), TlmcModel {} \
  }
#endif

// ---------------------------------------------------------------------------------------
// oneDNN

struct OnednnCase {
  // A primitive run before `prim`, in the timed region: the conversion of a float32 input
  // to bf16 when the activations are in the model's layout and the compute type is bf16.
  std::optional<dnnl::primitive> before;
  std::unordered_map<int, memory> before_args;
  dnnl::primitive prim;
  std::unordered_map<int, memory> args;  // in oneDNN's chosen layouts
  // A primitive run after `prim` on its destination, in place (U9's Softmax), when set.
  std::optional<dnnl::primitive> then;
  std::unordered_map<int, memory> then_args;
  memory dst;        // the primitive's destination
  memory dst_plain;  // the same, reordered to plain row-major
  std::string impl;  // implementation and chosen layouts, for the notes
};

struct Onednn {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{eng};

  memory plain(const Dims& dims, Tag tag, const Buffer& b) {
    return memory({dims, memory::data_type::f32, tag}, eng, b.data());
  }
  // `user` in the layout `want`: the same memory when they agree, else a reordered copy.
  // Runs outside any timed region.
  memory to(const memory::desc& want, memory user) {
    if (want == user.get_desc()) return user;
    memory m(want, eng);
    dnnl::reorder(user, m).execute(stream, user, m);
    stream.wait();
    return m;
  }
  void finish(OnednnCase& c, const Dims& dst_dims, Tag dst_tag, const std::string& impl) {
    c.dst_plain = memory({dst_dims, memory::data_type::f32, dst_tag}, eng);
    c.impl = impl;
  }
  // Copies the primitive's output to c.dst_plain (outside the timed region).
  void read_back(OnednnCase& c) {
    if (c.dst.get_desc() == c.dst_plain.get_desc()) {
      std::memcpy(c.dst_plain.get_data_handle(), c.dst.get_data_handle(),
                  c.dst.get_desc().get_size());
    } else {
      dnnl::reorder(c.dst, c.dst_plain).execute(stream, c.dst, c.dst_plain);
      stream.wait();
    }
  }
  // The model's float32 `user` input as the primitive's source `want` (bf16 in the model's
  // layout): converted by c.before in the timed region, as a float32 model converts it.
  memory converted_source(OnednnCase& c, const memory::desc& want, memory user) {
    if (want == user.get_desc()) return user;
    memory m(want, eng);
    c.before = dnnl::reorder(user, m);
    c.before_args = {{DNNL_ARG_FROM, user}, {DNNL_ARG_TO, m}};
    return m;
  }
  void run(OnednnCase& c) {
    if (c.before) c.before->execute(stream, c.before_args);
    c.prim.execute(stream, c.args);
    if (c.then) c.then->execute(stream, c.then_args);
    stream.wait();
  }
};

// ---------------------------------------------------------------------------------------
// Workloads

// oneDNN's activations (source and destination): in the model's layout, plain NCHW or
// row-major, as a tlmc library reads and writes them, or in the layouts
// oneDNN prefers (format_tag::any: blocked channels), reordered outside the timed region.
// Weights are in oneDNN's preferred layout either way (prepacked).
enum class Layouts { Model, Own };

struct Workload {
  std::string id, shape;
  double macs = 0;
  TlmcModels tlmc{};
  std::vector<std::shared_ptr<Buffer>> tlmc_inputs;  // the model's inputs, in its order
  size_t out_elems = 0;
  // Builds the oneDNN primitive for the same computation on the same data, reading its
  // input and weights in the given type (f32 or bf16).
  std::function<OnednnCase(Onednn&, Layouts, memory::data_type)> onednn;
  // The matrix products only: OpenBLAS's sgemm into `out` (empty for the convolutions).
  std::function<void(float* out)> openblas;
};

// out[b] = x[b] (m x k) * w[b] (k x n), b < batch, with OpenBLAS's sgemm.
std::function<void(float*)> openblas_matmul(std::shared_ptr<Buffer> x, std::shared_ptr<Buffer> w,
                                            int batch, int m, int k, int n) {
#ifdef TLMC_BENCH_HAVE_OPENBLAS
  return [=](float* out) {
    for (int b = 0; b < batch; ++b)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0F,
                  x->data() + static_cast<size_t>(b) * m * k, k,
                  w->data() + static_cast<size_t>(b) * k * n, n, 0.0F,
                  out + static_cast<size_t>(b) * m * n, n);
  };
#else
  (void)x, (void)w, (void)batch, (void)m, (void)k, (void)n;
  return {};
#endif
}

// What follows the product: oneDNN post-ops, or (Softmax over the last axis) a primitive of
// its own on the product's destination, which oneDNN cannot fuse.
enum class Activation { None, Relu, Relu6, GeluErf, Softmax };

dnnl::primitive_attr post_ops(Activation a) {
  dnnl::primitive_attr attr;
  if (a == Activation::None || a == Activation::Softmax) return attr;
  dnnl::post_ops ops;
  if (a == Activation::Relu) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  if (a == Activation::Relu6) ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, 0.0f, 6.0f);
  if (a == Activation::GeluErf)
    ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
  attr.set_post_ops(ops);
  return attr;
}

// Y[b] = X[b] (M x K) * W[b] (K x N) (+ bias[N]), then the activation. X and W are read in
// `type` (f32 or bf16), Y and the bias are float32.
OnednnCase onednn_matmul(Onednn& d, Layouts layouts, memory::data_type type, const Dims& src_dims,
                         const Dims& wei_dims, const Dims& dst_dims, const Buffer& x,
                         const Buffer& w, const Buffer* bias, Activation activation) {
  const Tag tag = src_dims.size() == 3 ? Tag::abc : Tag::ab;
  const Tag layout = layouts == Layouts::Own ? Tag::any : tag;
  const auto any = [type](const Dims& dims) { return memory::desc(dims, type, Tag::any); };
  const auto src = memory::desc(src_dims, type, layout);
  const auto act = [&](const Dims& dims) {
    return memory::desc(dims, memory::data_type::f32, layout);
  };
  const dnnl::primitive_attr attr = post_ops(activation);
  std::unique_ptr<dnnl::matmul::desc> desc;
  memory::desc bias_md;
  if (bias) {
    bias_md = memory::desc({1, dst_dims.back()}, memory::data_type::f32, Tag::ab);
    desc.reset(new dnnl::matmul::desc(src, any(wei_dims), bias_md, act(dst_dims)));
  } else {
    desc.reset(new dnnl::matmul::desc(src, any(wei_dims), act(dst_dims)));
  }
  dnnl::matmul::primitive_desc pd(*desc, attr, d.eng);
  OnednnCase c;
  c.prim = dnnl::matmul(pd);
  const memory user_src = d.plain(src_dims, tag, x);
  c.args[DNNL_ARG_SRC] = layouts == Layouts::Own ? d.to(pd.src_desc(), user_src)
                                                 : d.converted_source(c, pd.src_desc(), user_src);
  c.args[DNNL_ARG_WEIGHTS] = d.to(pd.weights_desc(), d.plain(wei_dims, tag, w));
  if (bias) c.args[DNNL_ARG_BIAS] = d.plain({1, dst_dims.back()}, Tag::ab, *bias);
  c.dst = memory(pd.dst_desc(), d.eng);
  c.args[DNNL_ARG_DST] = c.dst;
  std::string impl = std::string(pd.impl_info_str()) + " src=" + format_of(pd.src_desc()) +
                     " wei=" + format_of(pd.weights_desc()) + " dst=" + format_of(pd.dst_desc());
  if (activation == Activation::Softmax) {
    const dnnl::softmax_forward::desc sd(dnnl::prop_kind::forward_inference, pd.dst_desc(),
                                         static_cast<int>(dst_dims.size()) - 1);
    const dnnl::softmax_forward::primitive_desc spd(sd, d.eng);
    c.then = dnnl::softmax_forward(spd);
    c.then_args[DNNL_ARG_SRC] = c.dst;
    c.then_args[DNNL_ARG_DST] = c.dst;
    impl += ", then " + std::string(spd.impl_info_str());
  }
  d.finish(c, dst_dims, tag, impl);
  return c;
}

// The geometry of a square convolution: kernel, stride, symmetric padding, groups.
struct ConvShape {
  int64_t kernel = 1, stride = 1, pad = 0, groups = 1;
};

// NCHW convolution, OIHW weights (GOIHW when grouped), then the activation. The input and
// the weights are read in `type` (f32 or bf16), the output and the bias are float32.
OnednnCase onednn_conv(Onednn& d, Layouts layouts, memory::data_type type, int64_t c_in,
                       int64_t k_out, int64_t h, int64_t w_, ConvShape shape, const Buffer& x,
                       const Buffer& w, const Buffer* bias, Activation activation) {
  const auto [kernel, stride, pad, groups] = shape;
  const Dims src_dims{1, c_in, h, w_};
  const int64_t oh = (h + 2 * pad - kernel) / stride + 1, ow = (w_ + 2 * pad - kernel) / stride + 1;
  const Dims dst_dims{1, k_out, oh, ow};
  const Dims wei_dims = groups == 1 ? Dims{k_out, c_in, kernel, kernel}
                                    : Dims{groups, k_out / groups, c_in / groups, kernel, kernel};
  const Tag wei_tag = groups == 1 ? Tag::oihw : Tag::goihw;
  const Tag layout = layouts == Layouts::Own ? Tag::any : Tag::nchw;
  const auto any = [type](const Dims& dims) { return memory::desc(dims, type, Tag::any); };
  const auto src = memory::desc(src_dims, type, layout);
  const auto act = [&](const Dims& dims) {
    return memory::desc(dims, memory::data_type::f32, layout);
  };
  const dnnl::primitive_attr attr = post_ops(activation);
  const Dims strides{stride, stride}, pads{pad, pad};
  std::unique_ptr<dnnl::convolution_forward::desc> desc;
  if (bias) {
    desc.reset(new dnnl::convolution_forward::desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, any(wei_dims),
        memory::desc({k_out}, memory::data_type::f32, Tag::any), act(dst_dims), strides, pads,
        pads));
  } else {
    desc.reset(new dnnl::convolution_forward::desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, any(wei_dims),
        act(dst_dims), strides, pads, pads));
  }
  dnnl::convolution_forward::primitive_desc pd(*desc, attr, d.eng);
  OnednnCase c;
  c.prim = dnnl::convolution_forward(pd);
  const memory user_src = d.plain(src_dims, Tag::nchw, x);
  c.args[DNNL_ARG_SRC] = layouts == Layouts::Own ? d.to(pd.src_desc(), user_src)
                                                 : d.converted_source(c, pd.src_desc(), user_src);
  c.args[DNNL_ARG_WEIGHTS] = d.to(pd.weights_desc(), d.plain(wei_dims, wei_tag, w));
  if (bias) c.args[DNNL_ARG_BIAS] = d.to(pd.bias_desc(), d.plain({k_out}, Tag::a, *bias));
  c.dst = memory(pd.dst_desc(), d.eng);
  c.args[DNNL_ARG_DST] = c.dst;
  d.finish(c, dst_dims, Tag::nchw,
           std::string(pd.impl_info_str()) + " src=" + format_of(pd.src_desc()) +
               " wei=" + format_of(pd.weights_desc()) + " dst=" + format_of(pd.dst_desc()));
  return c;
}

// Where a workload's data come from: its input x drawn here, its weights w (and bias, when
// bias != 0) with the seeds of its YAML file, all uniform in [-1, 1]. second_is_input: w is
// the model's second input (batched attention products), drawn here too.
struct Seeds {
  uint64_t x = 0, w = 0, bias = 0;
  bool second_is_input = false;
};

// y[b] = x[b] (m x k) * w[b] (k x n) (+ bias[n]), b < batch, then the activation.
Workload matmul_workload(const char* id, const char* shape, TlmcModels model, int64_t batch,
                         int64_t m, int64_t k, int64_t n, Seeds seeds, Activation activation) {
  Workload w{id, shape, static_cast<double>(batch * m * k * n), model, {}, 0, {}, {}};
  auto x = make_uniform(static_cast<size_t>(batch * m * k), seeds.x, -1, 1);
  auto wt = make_uniform(static_cast<size_t>(batch * k * n), seeds.w, -1, 1);
  std::shared_ptr<Buffer> bias;
  if (seeds.bias) bias = make_uniform(static_cast<size_t>(n), seeds.bias, -1, 1);
  w.tlmc_inputs = {x};
  if (seeds.second_is_input) w.tlmc_inputs.push_back(wt);
  w.out_elems = static_cast<size_t>(batch * m * n);
  const auto dims = [batch](int64_t rows, int64_t cols) {
    return batch == 1 ? Dims{rows, cols} : Dims{batch, rows, cols};
  };
  w.onednn = [=](Onednn& d, Layouts l, memory::data_type type) {
    return onednn_matmul(d, l, type, dims(m, k), dims(k, n), dims(m, n), *x, *wt, bias.get(),
                         activation);
  };
  w.openblas = openblas_matmul(x, wt, static_cast<int>(batch), static_cast<int>(m),
                               static_cast<int>(k), static_cast<int>(n));
  return w;
}

// A square NCHW convolution of batch 1 (+ bias[k_out]), then the activation.
Workload conv_workload(const char* id, const char* shape, TlmcModels model, int64_t c_in,
                       int64_t k_out, int64_t hw, ConvShape geo, Seeds seeds,
                       Activation activation) {
  const int64_t out_hw = (hw + 2 * geo.pad - geo.kernel) / geo.stride + 1;
  const int64_t taps = (c_in / geo.groups) * geo.kernel * geo.kernel;
  Workload w{id, shape, static_cast<double>(k_out * out_hw * out_hw * taps), model, {}, 0, {}, {}};
  auto x = make_uniform(static_cast<size_t>(c_in * hw * hw), seeds.x, -1, 1);
  auto wt = make_uniform(static_cast<size_t>(k_out * taps), seeds.w, -1, 1);
  std::shared_ptr<Buffer> bias;
  if (seeds.bias) bias = make_uniform(static_cast<size_t>(k_out), seeds.bias, -1, 1);
  w.tlmc_inputs = {x};
  w.out_elems = static_cast<size_t>(k_out * out_hw * out_hw);
  w.onednn = [=](Onednn& d, Layouts l, memory::data_type type) {
    return onednn_conv(d, l, type, c_in, k_out, hw, hw, geo, *x, *wt, bias.get(), activation);
  };
  return w;
}

// The seeds of the weights are those of bench/workloads/*.yaml (w, bias); the inputs' are
// this program's.
std::vector<Workload> make_workloads() {
  using A = Activation;
  std::vector<Workload> ws;
  ws.push_back(matmul_workload("W1", "MatMul [1024,1024] x [1024,1024]", TLMC_MODELS(w1), 1, 1024,
                               1024, 1024, {1001, 101, 0}, A::None));
  ws.push_back(matmul_workload("W2", "Gemm+bias+Relu [128,768] x [768,3072]", TLMC_MODELS(w2), 1,
                               128, 768, 3072, {1002, 201, 202}, A::Relu));
  ws.push_back(conv_workload("W3", "Conv3x3+bias+Relu 1x64x56x56 -> 64, s1 p1", TLMC_MODELS(w3), 64,
                             64, 56, {3, 1, 1, 1}, {1003, 301, 302}, A::Relu));
  ws.push_back(conv_workload("W4", "Conv1x1 1x256x56x56 -> 64", TLMC_MODELS(w4), 256, 64, 56,
                             {1, 1, 0, 1}, {1004, 401, 0}, A::None));
  ws.push_back(matmul_workload("W5", "batched MatMul [12,128,64] x [12,64,128]", TLMC_MODELS(w5),
                               12, 128, 64, 128, {1005, 1006, 0, true}, A::None));
  ws.push_back(conv_workload("W6", "depthwise Conv3x3 1x144x56x56, g144 p1", TLMC_MODELS(w6), 144,
                             144, 56, {3, 1, 1, 144}, {1007, 601, 0}, A::None));
  // Shapes outside W1-W6, from ResNet-50, MobileNetV2 and BERT-base (bench/workloads/U*.yaml).
  ws.push_back(conv_workload("U1", "Conv3x3+bias+Relu 1x256x14x14 -> 256, s1 p1", TLMC_MODELS(u1),
                             256, 256, 14, {3, 1, 1, 1}, {2000, 1101, 1102}, A::Relu));
  ws.push_back(conv_workload("U2", "Conv3x3+bias+Relu 1x128x56x56 -> 128, s2 p1", TLMC_MODELS(u2),
                             128, 128, 56, {3, 2, 1, 1}, {2100, 1201, 1202}, A::Relu));
  ws.push_back(conv_workload("U3", "Conv1x1+bias+Relu 1x512x7x7 -> 2048", TLMC_MODELS(u3), 512,
                             2048, 7, {1, 1, 0, 1}, {2200, 1301, 1302}, A::Relu));
  ws.push_back(conv_workload("U4", "dw Conv3x3+bias+Relu6 1x96x112x112, s2 p1", TLMC_MODELS(u4), 96,
                             96, 112, {3, 2, 1, 96}, {2300, 1401, 1402}, A::Relu6));
  ws.push_back(conv_workload("U5", "Conv1x1+bias 1x144x56x56 -> 24", TLMC_MODELS(u5), 144, 24, 56,
                             {1, 1, 0, 1}, {2400, 1501, 1502}, A::None));
  ws.push_back(matmul_workload("U6", "MatMul+bias [128,768] x [768,768]", TLMC_MODELS(u6), 1, 128,
                               768, 768, {2600, 1601, 1602}, A::None));
  ws.push_back(matmul_workload("U7", "batched MatMul [12,128,128] x [12,128,64]", TLMC_MODELS(u7),
                               12, 128, 128, 64, {2700, 2701, 0, true}, A::None));
  // An epilogue that is a graph: GELU's erf form reads the biased value twice.
  ws.push_back(matmul_workload("U8", "Gemm+bias+GELU(erf) [128,768] x [768,3072]", TLMC_MODELS(u8),
                               1, 128, 768, 3072, {2800, 1801, 1802}, A::GeluErf));
  // A row reduction after a product: attention's scores and their Softmax (GFLOP/s count
  // the product's operations only).
  ws.push_back(matmul_workload("U9", "batched MatMul+Softmax [12,128,64] x [12,64,128]",
                               TLMC_MODELS(u9), 12, 128, 64, 128, {2900, 2901, 0, true},
                               A::Softmax));
  // Products with odd extents (bench/workloads/O*.yaml): a prime row count and a column count
  // that is no multiple of 16; an odd reduction and odd columns. No tile divides them.
  ws.push_back(matmul_workload("O1", "MatMul [97,1000] x [1000,333]", TLMC_MODELS(o1), 1, 97, 1000,
                               333, {3100, 3101, 0}, A::None));
  ws.push_back(matmul_workload("O2", "Gemm+bias+Relu [384,771] x [771,1029]", TLMC_MODELS(o2), 1,
                               384, 771, 1029, {3200, 3201, 3202}, A::Relu));
  return ws;
}

// ---------------------------------------------------------------------------------------
// Timing

struct Options {
  int threads = 0;
  int min_runs = 50;      // timed runs per measurement, at least
  double min_time = 1.0;  // seconds of timed runs per measurement, at least
  double max_time = 10;   // ...but no more once 2 runs per round are done
  double warmup = 0.2;    // seconds of untimed runs before the first round, at least (and 3 runs)
  int rounds = 3;  // tlmc and oneDNN alternate this many times, each round 1/rounds of the runs
  std::set<std::string> only;
  std::string results;  // a file for the figures, tab-separated, for scripts
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The run times of one side of a comparison, collected over several rounds.
class Samples {
 public:
  // One round: warm-up first (the full warm-up in the first round; afterwards two runs, to
  // wake the thread pool and the caches after the pause), then timed runs until this
  // round's share of the runs and of the time is done.
  void round(const std::function<void()>& f, const Options& o) {
    const auto w0 = Clock::now();
    const double warmup = t_.empty() ? std::min(o.warmup, o.max_time) : 0;
    for (int i = 0; i < (t_.empty() ? 3 : 2) || seconds_since(w0) < warmup; ++i) f();
    const int runs = (o.min_runs + o.rounds - 1) / o.rounds;
    const double min_time = o.min_time / o.rounds, max_time = o.max_time / o.rounds;
    starts_.push_back(t_.size());
    const auto t0 = Clock::now();
    for (int n = 1;; ++n) {
      const auto s = Clock::now();
      f();
      t_.push_back(seconds_since(s));
      const double elapsed = seconds_since(t0);
      if ((n >= runs && elapsed >= min_time) || (n >= 2 && elapsed >= max_time)) break;
    }
  }
  double median() const { return median_of(t_); }
  int runs() const { return static_cast<int>(t_.size()); }
  // The largest median of one round over the smallest: near 1 on a quiet machine.
  double spread() const {
    double lo = INFINITY, hi = 0;
    for (size_t r = 0; r < starts_.size(); ++r) {
      const size_t end = r + 1 < starts_.size() ? starts_[r + 1] : t_.size();
      const double m = median_of(std::vector<double>(t_.begin() + starts_[r], t_.begin() + end));
      lo = std::min(lo, m);
      hi = std::max(hi, m);
    }
    return hi / lo;
  }

 private:
  static double median_of(std::vector<double> t) {
    std::sort(t.begin(), t.end());
    const size_t n = t.size();
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  }
  std::vector<double> t_;
  std::vector<size_t> starts_;  // where each round's runs begin in t_
};

// Lets the other runtime's spinning workers go to sleep before the next measurement: on a
// machine with few cores they would otherwise compete with the threads being timed.
void settle() { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }

// ---------------------------------------------------------------------------------------
// Output

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t c = line.find(':');
      if (c != std::string::npos) return line.substr(line.find_first_not_of(" \t", c + 1));
    }
  }
  return "unknown";
}

// The 1-minute load average: how busy the shared machine was.
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string first;
  return in >> first ? first : "unknown";
}

const char* isa_name(dnnl::cpu_isa isa) {
  switch (isa) {
    case dnnl::cpu_isa::all:
      return "all";
    case dnnl::cpu_isa::sse41:
      return "sse41";
    case dnnl::cpu_isa::avx:
      return "avx";
    case dnnl::cpu_isa::avx2:
      return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
      return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic:
      return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops:
      return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core:
      return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
      return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
      return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
      return "avx512_core_amx";
    default:
      return "?";
  }
}

const char* onednn_runtime() {
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
  return "OpenMP";
#elif DNNL_CPU_RUNTIME == DNNL_RUNTIME_TBB
  return "TBB";
#elif DNNL_CPU_RUNTIME == DNNL_RUNTIME_SEQ
  return "sequential";
#elif DNNL_CPU_RUNTIME == DNNL_RUNTIME_THREADPOOL
  return "threadpool";
#else
  return "unknown";
#endif
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string sci(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

void print_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
  for (size_t k = 0; k < rows.size(); ++k) {
    std::string line = "|";
    for (size_t i = 0; i < rows[k].size(); ++i) {
      const bool left = i < 2;
      const std::string pad(width[i] - rows[k][i].size(), ' ');
      line += " " + (left ? rows[k][i] + pad : pad + rows[k][i]) + " |";
    }
    std::printf("%s\n", line.c_str());
    if (k == 0) {
      line = "|";
      for (size_t i = 0; i < width.size(); ++i)
        line += i < 2 ? ":" + std::string(width[i] + 1, '-') + "|"
                      : std::string(width[i] + 1, '-') + ":|";
      std::printf("%s\n", line.c_str());
    }
  }
}

void usage(FILE* f) {
  std::fprintf(
      f,
      "usage: bench_kernels [--threads N] [--only W1,W3,...] [--min-runs N] [--min-time S]\n"
      "                     [--max-time S] [--warmup S] [--rounds N] [--results FILE]\n"
      "Times tlmc's kernels and oneDNN's primitives (bench_kernels_bf16: in bf16) on the\n"
      "workloads W1-W6 listed in bench/README.md,\n"
      "U1-U9 (shapes outside that list) and O1-O2 (odd extents: bench/README.md).\n"
      "  --threads N    threads for both (default: all online cores)\n"
      "  --only LIST    the workloads to run, W1,...,U9,O1,O2 (default: all)\n"
      "  --min-runs N   timed runs per measurement, at least (default 50)\n"
      "  --min-time S   seconds of timed runs per measurement, at least (default 1)\n"
      "  --max-time S   ...but at most S seconds once 2 runs per round are done (default 10)\n"
      "  --warmup S     seconds of untimed runs first, at least 3 runs (default 0.2)\n"
      "  --rounds N     tlmc and oneDNN alternate N times, each round 1/N of the runs (default "
      "3)\n"
      "  --results FILE also write the FMA peak and each workload's GFLOP/s (tlmc, oneDNN,\n"
      "                 OpenBLAS, oneDNN own layouts; bf16: the bf16 peak, tlmc bf16, tlmc\n"
      "                 fp32, oneDNN, oneDNN own layouts), tab-separated\n");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_kernels: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    try {
      if (a == "--threads") {
        o.threads = std::stoi(value());
      } else if (a == "--min-runs") {
        o.min_runs = std::stoi(value());
      } else if (a == "--min-time") {
        o.min_time = std::stod(value());
      } else if (a == "--max-time") {
        o.max_time = std::stod(value());
      } else if (a == "--rounds") {
        o.rounds = std::stoi(value());
      } else if (a == "--results") {
        o.results = value();
      } else if (a == "--warmup") {
        o.warmup = std::stod(value());
      } else if (a == "--only") {
        std::stringstream ss(value());
        std::string item;
        while (std::getline(ss, item, ',')) {
          for (auto& ch : item)
            ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
          o.only.insert(item);
        }
      } else if (a == "-h" || a == "--help") {
        usage(stdout);
        std::exit(0);
      } else {
        std::fprintf(stderr, "bench_kernels: unknown argument '%s'\n", a.c_str());
        usage(stderr);
        std::exit(2);
      }
    } catch (const std::logic_error&) {
      std::fprintf(stderr, "bench_kernels: bad value for %s\n", a.c_str());
      std::exit(2);
    }
  }
  if (o.threads <= 0) o.threads = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  if (o.min_runs < 1) o.min_runs = 1;
  if (o.rounds < 1) o.rounds = 1;
  return o;
}

// One tlmc library ready to run on a workload's inputs: its thread count, workspace and
// output buffer.
class TlmcRunner {
 public:
  TlmcRunner(const TlmcModel& model, const Workload& w, int threads)
      : model_(model),
        id_(w.id),
        workspace_((model.workspace_size() + 3) / 4 + 16),
        out_(w.out_elems) {
    model_.set_num_threads(threads);
    for (const auto& b : w.tlmc_inputs) in_.push_back(b->data());
  }
  void operator()() {
    void* outs[1] = {out_.data()};
    if (model_.run(in_.data(), outs, workspace_.data()) != 0)
      throw std::runtime_error(id_ + ": tlmc run failed (" + model_.name + ")");
  }
  const float* out() const { return out_.data(); }

 private:
  TlmcModel model_;
  std::string id_;
  Buffer workspace_, out_;
  std::vector<const void*> in_;
};

// max |a - ref| / max |ref| over n elements: INFINITY where a holds a NaN, or where ref is
// all zeros (vacuous on random data).
double relative_error(const float* a, const float* ref, size_t n) {
  double max_diff = 0, max_ref = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = std::fabs(static_cast<double>(a[i]) - ref[i]);
    max_diff = std::isnan(d) ? INFINITY : std::max(max_diff, d);
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(ref[i])));
  }
  return max_ref > 0 ? max_diff / max_ref : INFINITY;
}

const float* data_of(const OnednnCase& c) {
  return static_cast<const float*>(c.dst_plain.get_data_handle());
}

double geomean(const std::vector<double>& r) {
  double log_sum = 0;
  for (double x : r) log_sum += std::log(x);
  return std::exp(log_sum / static_cast<double>(r.size()));
}

const char* group_name(char group) {
  switch (group) {
    case 'W':
      return "listed workloads";
    case 'U':
      return "shapes outside that list";
    default:
      return "products with odd extents";
  }
}

std::vector<Workload> selected_workloads(const Options& o) {
  std::vector<Workload> ws;
  for (Workload& w : make_workloads())
    if (o.only.empty() || o.only.count(w.id)) ws.push_back(std::move(w));
  return ws;
}

// The float32 table: tlmc's float32 libraries beside oneDNN (model's and own layouts) and
// OpenBLAS. Returns the exit status.
int fp32_table(const Options& o, const FmaPeak& peak) {
  Onednn dnn;
  std::vector<std::vector<std::string>> rows = {
      {"workload", "shape", "tlmc ms", "tlmc GFLOP/s", "% peak", "oneDNN GFLOP/s", "tlmc/oneDNN",
       "oneDNN own layouts", "tlmc/own", "OpenBLAS GFLOP/s", "tlmc/OpenBLAS", "max rel err", "runs",
       "round spread"}};
  // tlmc/oneDNN per group of workloads: "W" (bench/README.md), "U" (outside that list), "O".
  std::map<char, std::vector<double>> ratios, own_ratios;
  // --results: workload, then GFLOP/s of tlmc, oneDNN (model layout), OpenBLAS, oneDNN (own
  // layouts)
  std::string results;
  std::vector<std::string> notes;
  bool ok = true;
  for (Workload& w : selected_workloads(o)) {
    std::fprintf(stderr, "%s ...\n", w.id.c_str());
    TlmcRunner tlmc(w.tlmc.fp32, w, o.threads);
    OnednnCase model = w.onednn(dnn, Layouts::Model, memory::data_type::f32),
               own = w.onednn(dnn, Layouts::Own, memory::data_type::f32);
    Buffer blas_out(w.out_elems);
    // Alternate them, so that a spell of load from elsewhere on the machine falls on all.
    Samples tt, dt, ot, bt;
    for (int r = 0; r < o.rounds; ++r) {
      settle();
      tt.round([&] { tlmc(); }, o);
      settle();
      dt.round([&] { dnn.run(model); }, o);
      settle();
      ot.round([&] { dnn.run(own); }, o);
      if (!w.openblas) continue;
      settle();
      bt.round([&] { w.openblas(blas_out.data()); }, o);
    }
    dnn.read_back(model);
    dnn.read_back(own);

    // Agreement: max |tlmc - oneDNN| over max |oneDNN|, against both of oneDNN's results.
    const double err = std::max(relative_error(tlmc.out(), data_of(model), w.out_elems),
                                relative_error(tlmc.out(), data_of(own), w.out_elems));
    const bool agree = err <= 1e-3;
    ok = ok && agree;

    const double flop = 2 * w.macs;
    const bool blas = static_cast<bool>(w.openblas);
    ratios[w.id[0]].push_back(dt.median() / tt.median());
    own_ratios[w.id[0]].push_back(ot.median() / tt.median());
    results += w.id + "\t" + fixed(flop / tt.median() * 1e-9, 2) + "\t" +
               fixed(flop / dt.median() * 1e-9, 2) + "\t" +
               (blas ? fixed(flop / bt.median() * 1e-9, 2) : "-") + "\t" +
               fixed(flop / ot.median() * 1e-9, 2) + "\n";
    rows.push_back(
        {w.id, w.shape, fixed(tt.median() * 1e3, 3), fixed(flop / tt.median() * 1e-9, 1),
         fixed(100 * flop / tt.median() * 1e-9 / peak.gflops, 0),
         fixed(flop / dt.median() * 1e-9, 1), fixed(dt.median() / tt.median(), 2),
         fixed(flop / ot.median() * 1e-9, 1), fixed(ot.median() / tt.median(), 2),
         blas ? fixed(flop / bt.median() * 1e-9, 1) : "-",
         blas ? fixed(bt.median() / tt.median(), 2) : "-", sci(err) + (agree ? "" : " FAIL"),
         std::to_string(tt.runs()) + "/" + std::to_string(dt.runs()) + "/" +
             std::to_string(ot.runs()),
         fixed(tt.spread(), 2) + "/" + fixed(dt.spread(), 2) + "/" + fixed(ot.spread(), 2)});
    notes.push_back(w.id + ": oneDNN (model layout) " + model.impl);
    notes.push_back(w.id + ": oneDNN (own layouts)  " + own.impl);
  }

  print_table(rows);
  for (const auto& [group, r] : ratios)
    std::printf(
        "\ngeometric mean over these %zu %s: tlmc/oneDNN %.2f (model layout), %.2f (own "
        "layouts)",
        r.size(), group_name(group), geomean(r), geomean(own_ratios[group]));
  std::printf("\n");
  if (!o.results.empty()) {
    std::ofstream f(o.results);
    f << "peak\t" << fixed(peak.gflops, 2) << "\n" << results;
  }
  std::printf(
      "\nGFLOP/s = 2*MACs / median time (bias and Relu not counted). tlmc/oneDNN = oneDNN time / "
      "tlmc time:\n"
      "above 1, tlmc is faster. max rel err = max|tlmc - oneDNN| / max|oneDNN|, same inputs and "
      "weights (must\n"
      "be <= 1e-3, against both of oneDNN's results). runs = timed runs, tlmc/oneDNN/own. round "
      "spread = slowest\n"
      "round's median / fastest round's, tlmc/oneDNN/own: well above 1, something else was using "
      "the machine.\n"
      "oneDNN reads and writes the model's layout (plain NCHW / row-major, as tlmc does in its "
      "timed run) with\n"
      "its weights prepacked into the layout it prefers (format_tag::any); 'own layouts' lets it "
      "choose the\n"
      "activations' layout too (blocked channels), the reorders of the input into it and of the "
      "output back\n"
      "being outside its timed region. Implementations and layouts are listed below. All run on "
      "warm caches\n"
      "(the same inputs every run). The machine is shared and noisy: compare ratios from one run. "
      "Load average at "
      "the end: %s.\n",
      load_average().c_str());
  for (const auto& n : notes) std::printf("%s\n", n.c_str());
  if (!ok) std::fprintf(stderr, "bench_kernels: tlmc and oneDNN disagree (max rel err > 1e-3)\n");
  return ok ? 0 : 1;
}

// The bf16 table: tlmc's --precision bf16 libraries beside its float32 ones and beside oneDNN
// reading its input and weights in bf16 (model's and own layouts); each side's error against
// oneDNN's float32 result on the same data. Returns the exit status.
int bf16_table(const Options& o, double bf16_peak) {
  Onednn dnn;
  std::vector<std::vector<std::string>> rows = {
      {"workload", "shape", "tlmc bf16 ms", "tlmc bf16 GFLOP/s", "% bf16 peak", "tlmc fp32 GFLOP/s",
       "bf16/fp32", "oneDNN bf16 GFLOP/s", "tlmc/oneDNN", "oneDNN bf16 own layouts", "tlmc/own",
       "tlmc error", "oneDNN error", "runs", "round spread"}};
  std::map<char, std::vector<double>> ratios, own_ratios, speedups;
  std::string results;  // --results: workload, GFLOP/s of tlmc bf16, tlmc fp32, oneDNN, own
  std::vector<std::string> notes;
  bool ok = true;
  const auto f32 = memory::data_type::f32, bf16 = memory::data_type::bf16;
  for (Workload& w : selected_workloads(o)) {
    std::fprintf(stderr, "%s ...\n", w.id.c_str());
    TlmcRunner tlmc(w.tlmc.bf16, w, o.threads), tlmc_fp32(w.tlmc.fp32, w, o.threads);
    OnednnCase model = w.onednn(dnn, Layouts::Model, bf16), own = w.onednn(dnn, Layouts::Own, bf16),
               reference = w.onednn(dnn, Layouts::Model, f32);
    dnn.run(reference);
    dnn.read_back(reference);
    Samples tb, tf, dt, ot;
    for (int r = 0; r < o.rounds; ++r) {
      settle();
      tb.round([&] { tlmc(); }, o);
      settle();
      tf.round([&] { tlmc_fp32(); }, o);
      settle();
      dt.round([&] { dnn.run(model); }, o);
      settle();
      ot.round([&] { dnn.run(own); }, o);
    }
    dnn.read_back(model);
    dnn.read_back(own);

    // Both sides round the same inputs to bf16 and accumulate in float32, so their errors
    // against the float32 result should be alike: tlmc's may not exceed 1.5 times oneDNN's
    // (the worse of its two layouts), and its float32 library must agree as in the float32
    // table.
    const size_t n = w.out_elems;
    const double ref_err = relative_error(data_of(reference), data_of(reference), n);
    const double err = relative_error(tlmc.out(), data_of(reference), n);
    const double dnn_err = std::max(relative_error(data_of(model), data_of(reference), n),
                                    relative_error(data_of(own), data_of(reference), n));
    const double fp32_err = relative_error(tlmc_fp32.out(), data_of(reference), n);
    const bool agree = ref_err == 0 && err <= 1.5 * dnn_err + 1e-6 && fp32_err <= 1e-3;
    ok = ok && agree;

    const double flop = 2 * w.macs;
    ratios[w.id[0]].push_back(dt.median() / tb.median());
    own_ratios[w.id[0]].push_back(ot.median() / tb.median());
    speedups[w.id[0]].push_back(tf.median() / tb.median());
    results += w.id + "\t" + fixed(flop / tb.median() * 1e-9, 2) + "\t" +
               fixed(flop / tf.median() * 1e-9, 2) + "\t" + fixed(flop / dt.median() * 1e-9, 2) +
               "\t" + fixed(flop / ot.median() * 1e-9, 2) + "\n";
    rows.push_back({w.id, w.shape, fixed(tb.median() * 1e3, 3), fixed(flop / tb.median() * 1e-9, 1),
                    fixed(100 * flop / tb.median() * 1e-9 / bf16_peak, 0),
                    fixed(flop / tf.median() * 1e-9, 1), fixed(tf.median() / tb.median(), 2),
                    fixed(flop / dt.median() * 1e-9, 1), fixed(dt.median() / tb.median(), 2),
                    fixed(flop / ot.median() * 1e-9, 1), fixed(ot.median() / tb.median(), 2),
                    sci(err) + (agree ? "" : " FAIL"), sci(dnn_err),
                    std::to_string(tb.runs()) + "/" + std::to_string(tf.runs()) + "/" +
                        std::to_string(dt.runs()) + "/" + std::to_string(ot.runs()),
                    fixed(tb.spread(), 2) + "/" + fixed(tf.spread(), 2) + "/" +
                        fixed(dt.spread(), 2) + "/" + fixed(ot.spread(), 2)});
    notes.push_back(w.id + ": oneDNN bf16 (model layout) " + model.impl);
    notes.push_back(w.id + ": oneDNN bf16 (own layouts)  " + own.impl);
  }

  print_table(rows);
  for (const auto& [group, r] : ratios)
    std::printf(
        "\ngeometric mean over these %zu %s: tlmc/oneDNN %.2f (model layout), %.2f (own "
        "layouts); tlmc bf16/fp32 %.2f",
        r.size(), group_name(group), geomean(r), geomean(own_ratios[group]),
        geomean(speedups[group]));
  std::printf("\n");
  if (!o.results.empty()) {
    std::ofstream f(o.results);
    f << "bf16 peak\t" << fixed(bf16_peak, 2) << "\n" << results;
  }
  std::printf(
      "\nGFLOP/s = 2*MACs / median time (bias and Relu not counted). tlmc/oneDNN = oneDNN time / "
      "tlmc bf16 time,\n"
      "bf16/fp32 = tlmc fp32 time / tlmc bf16 time: above 1, tlmc bf16 is faster. Both read a "
      "float32 input and\n"
      "write a float32 output: tlmc converts its input in its timed call, and so does oneDNN in "
      "the model's layout\n"
      "(a reorder to bf16 before the primitive); in its own layouts the input is converted and "
      "reordered outside\n"
      "the timed region. Weights are converted once, outside. A depthwise convolution reads "
      "its input in bf16\n"
      "but computes in float32 (its conversion is all it gains or loses alone). error = "
      "max|x - ref| / max|ref| against\n"
      "oneDNN's float32 result on the same data; tlmc's must be <= 1.5 x oneDNN's (the worse of "
      "its two layouts).\n"
      "runs and round spread: tlmc bf16/tlmc fp32/oneDNN/own. Load average at the end: %s.\n",
      load_average().c_str());
  for (const auto& n : notes) std::printf("%s\n", n.c_str());
  if (!ok) std::fprintf(stderr, "bench_kernels: a bf16 result is off (see FAIL)\n");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);

  // The same thread count for both sides.
  std::string onednn_threads;
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP && defined(TLMC_BENCH_HAVE_OPENMP)
  omp_set_num_threads(o.threads);
  onednn_threads = "omp_set_num_threads(" + std::to_string(o.threads) + "), OpenMP reports " +
                   std::to_string(omp_get_max_threads());
#elif DNNL_CPU_RUNTIME == DNNL_RUNTIME_SEQ
  onednn_threads = "sequential build: 1 thread";
#else
  onednn_threads = "NOT SET (its runtime's default; this build cannot set it)";
#endif

#ifdef TLMC_BENCH_HAVE_OPENBLAS
  openblas_set_num_threads(o.threads);
  const std::string openblas = std::string(openblas_get_config()) + ", " +
                               std::to_string(openblas_get_num_threads()) + " threads";
#else
  const std::string openblas = "not built in (install libopenblas-dev)";
#endif
  const FmaPeak peak = measure_fma_peak(o.threads);
#ifdef TLMC_BENCH_BF16
  const bool bf16 = true;
  const Bf16Peaks bf16_peaks = measure_bf16_peaks(o.threads);
#else
  const bool bf16 = false;
  const Bf16Peaks bf16_peaks;
#endif

  const dnnl::version_t* v = dnnl::version();
  std::printf(
      "tlmc kernels vs oneDNN, %s, workloads W1-W6 (bench/README.md), U1-U9 outside it, O1-O2 "
      "with odd extents\n",
      bf16 ? "bf16 (tlmc --precision bf16, oneDNN's bf16 input and weights)" : "float32");
  std::printf("machine: %s, %ld cores online, load average %s at the start\n", cpu_model().c_str(),
              sysconf(_SC_NPROCESSORS_ONLN), load_average().c_str());
  std::printf("peak:    %.1f GFLOP/s float32 FMA on %d threads (%s), measured now\n", peak.gflops,
              o.threads, peak.isa.c_str());
  if (bf16)
    std::printf(
        "         bf16: %.1f GFLOP/s by vdpbf16ps, %.1f by AMX tdpbf16ps (0: not on this CPU)\n",
        bf16_peaks.avx512_bf16, bf16_peaks.amx_bf16);
  std::printf("tlmc:    target %s, %s%s\n", TLMC_BENCH_TARGET, TLMC_BENCH_OPT,
              bf16 ? " (and --precision bf16)" : "");
  if (!bf16)
    std::printf(
        "OpenBLAS: %s (matrix products only; W2's, U6's, U8's and O2's epilogues and U9's Softmax "
        "not run)\n",
        openblas.c_str());
  std::printf("oneDNN:  %d.%d.%d, CPU runtime %s, ISA %s\n", v->major, v->minor, v->patch,
              onednn_runtime(), isa_name(dnnl::get_effective_cpu_isa()));
  std::printf("threads: %d (tlmc: wN_set_num_threads(%d); oneDNN: %s)\n", o.threads, o.threads,
              onednn_threads.c_str());
  std::printf(
      "timing:  median of >= %d runs and >= %.2g s per kernel (at most %.2g s), in %d rounds "
      "alternating tlmc "
      "and oneDNN, after >= %.2g s of warm-up\n\n",
      o.min_runs, o.min_time, o.max_time, o.rounds, o.warmup);
  std::fflush(stdout);
  if (!bf16) return fp32_table(o, peak);
  const double bf16_peak = std::max(bf16_peaks.amx_bf16, bf16_peaks.avx512_bf16);
  if (bf16_peak == 0) {
    std::fprintf(stderr, "bench_kernels: this CPU has neither AVX512_BF16 nor AMX\n");
    return 1;
  }
  return bf16_table(o, bf16_peak);
}
