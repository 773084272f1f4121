/* What the CUDA code tlmc generates uses beside the CUDA runtime: shared arrays declared
 * through a macro, 16-byte copies into them through one, and kernels launched through one. On a GPU
 * they are __shared__ arrays and cudaLaunchKernel; compiled against the CPU emulator (its
 * cuda_runtime.h defines TLMC_CUDA_EMULATION), every shared access is checked and the launch runs
 * the blocks here. */
#ifndef TLMC_CUDA_H
#define TLMC_CUDA_H

#ifdef __CUDACC_RTC__
/* NVRTC compiles the kernels alone (tlmc's static check), without the C library's headers:
 * the fixed-width integers and the float constants the kernels use, from the compiler. */
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fc00000)
#define TLMC_SHARED(type, name, count) __shared__ __align__(16) type name[count]
#define TLMC_DYNAMIC_SHARED(type, name) extern __shared__ __align__(16) type name[]
#define TLMC_DYNAMIC_SHARED_BASE(base) extern __shared__ __align__(16) unsigned char base[]
#define TLMC_SHARED_AT(base, type, name, offset, count) \
  type* const name = reinterpret_cast<type*>(base + (offset))
#define TLMC_COPY4(to, at, from, from_at) \
  (*reinterpret_cast<float4*>(&(to)[at]) = *reinterpret_cast<const float4*>(&(from)[from_at]))
#else
#include <cuda_runtime.h>

#include <cstddef>
#include <tuple>
#include <utility>

#ifdef TLMC_CUDA_EMULATION
#define TLMC_SHARED(type, name, count) static ::tlmc_emu::SharedArray<type> name(#name, count)
#define TLMC_DYNAMIC_SHARED(type, name) ::tlmc_emu::SharedArray<type> name(#name)
#define TLMC_DYNAMIC_SHARED_BASE(base) static_cast<void>(0)
#define TLMC_SHARED_AT(base, type, name, offset, count) \
  ::tlmc_emu::SharedArray<type> name(#name, offset, count)
#define TLMC_LAUNCH(kernel, grid, block, shared_bytes, stream, ...) \
  tlmc_emulated_launch(#kernel, kernel, grid, block, shared_bytes, stream, __VA_ARGS__)
#define TLMC_COPY4(to, at, from, from_at) ::tlmc_emu::copy4(to, at, from, from_at)
#else
#define TLMC_SHARED(type, name, count) __shared__ __align__(16) type name[count]
#define TLMC_DYNAMIC_SHARED(type, name) extern __shared__ __align__(16) type name[]
/* Beyond what a block may declare statically, a kernel's shared arrays are placed in its
 * dynamic shared memory (sized at launch, opted in by cudaFuncSetAttribute). */
#define TLMC_DYNAMIC_SHARED_BASE(base) extern __shared__ __align__(16) unsigned char base[]
#define TLMC_SHARED_AT(base, type, name, offset, count) \
  type* const name = reinterpret_cast<type*>(base + (offset))
#define TLMC_LAUNCH(kernel, grid, block, shared_bytes, stream, ...) \
  tlmc_launch(kernel, grid, block, shared_bytes, stream, __VA_ARGS__)
/* Four consecutive 4-byte elements from global memory into a shared array, one 16-byte
 * load and store (both addresses multiples of 16: tlmc proves it before emitting one). */
#define TLMC_COPY4(to, at, from, from_at) \
  (*reinterpret_cast<float4*>(&(to)[at]) = *reinterpret_cast<const float4*>(&(from)[from_at]))

/* The arguments converted to the kernel's parameter types, then their addresses, as
 * cudaLaunchKernel reads them. */
template <typename... Params, size_t... I>
static cudaError_t tlmc_launch_tuple(void (*kernel)(Params...), dim3 grid, dim3 block,
                                     size_t shared_bytes, cudaStream_t stream,
                                     std::tuple<Params...>& values, std::index_sequence<I...>) {
  void* args[] = {static_cast<void*>(&std::get<I>(values))...};
  return cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, args, shared_bytes,
                          stream);
}
template <typename... Params, typename... Args>
static cudaError_t tlmc_launch(void (*kernel)(Params...), dim3 grid, dim3 block,
                               size_t shared_bytes, cudaStream_t stream, Args... args) {
  std::tuple<Params...> values(args...);
  return tlmc_launch_tuple(kernel, grid, block, shared_bytes, stream, values,
                           std::index_sequence_for<Params...>{});
}
#endif

#endif /* __CUDACC_RTC__ */

#endif
