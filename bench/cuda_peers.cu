// The peers of bench/cuda_vs_cublas.py on a GPU: W1-W6 (bench/workloads) through cuBLAS and
// cuDNN in float32 with TF32 off (cuBLAS's default math, cuDNN's FMA math), each timed with
// CUDA events as back-to-back runs of at least 20 ms, the median of 7 such repeats; cuDNN's
// convolution algorithm is the fastest cudnnFindConvolutionForwardAlgorithm reports. What a
// framework runs is timed: a bias and ReLU not fused into the library call are a kernel of
// their own here.
//
//   nvcc -O2 -std=c++17 bench/cuda_peers.cu -lcublas -lcudnn -o cuda_peers && ./cuda_peers
//
// prints one line per workload: "W1 cublas-sgemm 123.45" (microseconds per run). Where cuDNN
// is not installed, -DCUDA_PEERS_NO_CUDNN (and no -lcudnn) builds the cuBLAS workloads alone.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#ifndef CUDA_PEERS_NO_CUDNN
#include <cudnn.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

namespace {

void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "cuda_peers: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

void check_cublas(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "cuda_peers: %s: cuBLAS status %d\n", what, static_cast<int>(s));
  std::exit(1);
}

#ifndef CUDA_PEERS_NO_CUDNN
void check_cudnn(cudnnStatus_t s, const char* what) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  std::fprintf(stderr, "cuda_peers: %s: %s\n", what, cudnnGetErrorString(s));
  std::exit(1);
}
#endif

// Device memory of `n` floats, uniform in [-1, 1].
float* device_floats(size_t n) {
  std::vector<float> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = 2.0f * static_cast<float>(std::rand()) / RAND_MAX - 1;
  float* p = nullptr;
  check_cuda(cudaMalloc(&p, std::max<size_t>(n, 1) * sizeof(float)), "cudaMalloc");
  check_cuda(cudaMemcpy(p, host.data(), n * sizeof(float), cudaMemcpyHostToDevice), "upload");
  return p;
}

// Microseconds per run of `body`: runs back to back between two events, at least 20 ms a
// repeat, the median of 7 repeats after a warm-up.
double microseconds(const std::function<void()>& body) {
  cudaEvent_t start, stop;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  auto time = [&](int n) {
    check_cuda(cudaEventRecord(start), "cudaEventRecord");
    for (int i = 0; i < n; ++i) body();
    check_cuda(cudaEventRecord(stop), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return 1e3 * static_cast<double>(ms) / n;
  };
  time(3);
  const double once = std::max(time(1), 1.0);
  const int n = std::max(1, static_cast<int>(20000 / once));
  std::vector<double> repeats;
  for (int r = 0; r < 7; ++r) repeats.push_back(time(n));
  std::sort(repeats.begin(), repeats.end());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return repeats[repeats.size() / 2];
}

__global__ void bias_relu(float* y, const float* bias, int rows, int cols) {
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < static_cast<long>(rows) * cols) y[i] = fmaxf(y[i] + bias[i % cols], 0.0f);
}

// Row-major C[M,N] = A[M,K] B[K,N] (batch of them, strided), as cuBLAS's column-major
// C^T = B^T A^T.
void sgemm(cublasHandle_t h, int batch, int m, int n, int k, const float* a, const float* b,
           float* c) {
  const float one = 1, zero = 0;
  check_cublas(
      cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n,
                                static_cast<long long>(k) * n, a, k, static_cast<long long>(m) * k,
                                &zero, c, n, static_cast<long long>(m) * n, batch),
      "cublasSgemmStridedBatched");
}

double matmul(cublasHandle_t h, int batch, int m, int n, int k, bool bias_and_relu) {
  float* a = device_floats(static_cast<size_t>(batch) * m * k);
  float* b = device_floats(static_cast<size_t>(batch) * k * n);
  float* c = device_floats(static_cast<size_t>(batch) * m * n);
  float* bias = device_floats(static_cast<size_t>(n));
  const double us = microseconds([&] {
    sgemm(h, batch, m, n, k, a, b, c);
    if (bias_and_relu) {
      const long total = static_cast<long>(m) * n;
      bias_relu<<<static_cast<unsigned>((total + 255) / 256), 256>>>(c, bias, m, n);
    }
  });
  for (float* p : {a, b, c, bias}) cudaFree(p);
  return us;
}

#ifndef CUDA_PEERS_NO_CUDNN
// NCHW convolution (square kernel, symmetric padding), with its bias and ReLU when asked.
double convolution(cudnnHandle_t h, int n, int c, int hw, int k, int r, int stride, int pad,
                   int groups, bool bias_and_relu) {
  cudnnTensorDescriptor_t x_desc, y_desc, b_desc;
  cudnnFilterDescriptor_t w_desc;
  cudnnConvolutionDescriptor_t conv;
  cudnnActivationDescriptor_t relu;
  check_cudnn(cudnnCreateTensorDescriptor(&x_desc), "descriptor");
  check_cudnn(cudnnCreateTensorDescriptor(&y_desc), "descriptor");
  check_cudnn(cudnnCreateTensorDescriptor(&b_desc), "descriptor");
  check_cudnn(cudnnCreateFilterDescriptor(&w_desc), "descriptor");
  check_cudnn(cudnnCreateConvolutionDescriptor(&conv), "descriptor");
  check_cudnn(cudnnCreateActivationDescriptor(&relu), "descriptor");
  check_cudnn(cudnnSetTensor4dDescriptor(x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, hw, hw),
              "input");
  check_cudnn(
      cudnnSetFilter4dDescriptor(w_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, k, c / groups, r, r),
      "filter");
  check_cudnn(cudnnSetConvolution2dDescriptor(conv, pad, pad, stride, stride, 1, 1,
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              "convolution");
  check_cudnn(cudnnSetConvolutionGroupCount(conv, groups), "groups");
  check_cudnn(cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH), "FMA math (no TF32)");
  int on, oc, oh, ow;
  check_cudnn(cudnnGetConvolution2dForwardOutputDim(conv, x_desc, w_desc, &on, &oc, &oh, &ow),
              "output size");
  check_cudnn(
      cudnnSetTensor4dDescriptor(y_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, oc, oh, ow),
      "output");
  check_cudnn(cudnnSetTensor4dDescriptor(b_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, oc, 1, 1),
              "bias");
  check_cudnn(cudnnSetActivationDescriptor(relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0),
              "relu");
  float* x = device_floats(static_cast<size_t>(n) * c * hw * hw);
  float* w = device_floats(static_cast<size_t>(k) * (c / groups) * r * r);
  float* y = device_floats(static_cast<size_t>(on) * oc * oh * ow);
  float* b = device_floats(static_cast<size_t>(oc));
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  check_cudnn(cudnnFindConvolutionForwardAlgorithm(h, x_desc, w_desc, conv, y_desc,
                                                   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
              "cudnnFindConvolutionForwardAlgorithm");
  int best = -1;
  for (int i = 0; i < found && best < 0; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].mathType != CUDNN_TENSOR_OP_MATH &&
        perf[i].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
      best = i;
  if (best < 0) {
    std::fprintf(stderr, "cuda_peers: cuDNN offers no float32 algorithm without TF32\n");
    std::exit(1);
  }
  void* workspace = nullptr;
  check_cuda(cudaMalloc(&workspace, std::max<size_t>(perf[best].memory, 16)), "workspace");
  const float one = 1, zero = 0;
  const double us = microseconds([&] {
    check_cudnn(cudnnConvolutionForward(h, &one, x_desc, x, w_desc, w, conv, perf[best].algo,
                                        workspace, perf[best].memory, &zero, y_desc, y),
                "cudnnConvolutionForward");
    if (bias_and_relu) {
      check_cudnn(cudnnAddTensor(h, &one, b_desc, b, &one, y_desc, y), "cudnnAddTensor");
      check_cudnn(cudnnActivationForward(h, relu, &one, y_desc, y, &zero, y_desc, y),
                  "cudnnActivationForward");
    }
  });
  for (float* p : {x, w, y, b}) cudaFree(p);
  cudaFree(workspace);
  cudnnDestroyTensorDescriptor(x_desc);
  cudnnDestroyTensorDescriptor(y_desc);
  cudnnDestroyTensorDescriptor(b_desc);
  cudnnDestroyFilterDescriptor(w_desc);
  cudnnDestroyConvolutionDescriptor(conv);
  cudnnDestroyActivationDescriptor(relu);
  return us;
}
#endif

}  // namespace

int main() {
  cublasHandle_t blas;
  check_cublas(cublasCreate(&blas), "cublasCreate");
  check_cublas(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH), "default math (no TF32)");
  std::printf("W1 cublas-sgemm %.2f\n", matmul(blas, 1, 1024, 1024, 1024, false));
  std::printf("W2 cublas-sgemm+bias-relu %.2f\n", matmul(blas, 1, 128, 3072, 768, true));
  std::printf("W5 cublas-sgemm-batched %.2f\n", matmul(blas, 12, 128, 128, 64, false));
  cublasDestroy(blas);
#ifndef CUDA_PEERS_NO_CUDNN
  cudnnHandle_t dnn;
  check_cudnn(cudnnCreate(&dnn), "cudnnCreate");
  std::printf("W3 cudnn-conv+bias-relu %.2f\n", convolution(dnn, 1, 64, 56, 64, 3, 1, 1, 1, true));
  std::printf("W4 cudnn-conv %.2f\n", convolution(dnn, 1, 256, 56, 64, 1, 1, 0, 1, false));
  std::printf("W6 cudnn-conv-depthwise %.2f\n",
              convolution(dnn, 1, 144, 56, 144, 3, 1, 1, 144, false));
  cudnnDestroy(dnn);
#endif
  return 0;
}
