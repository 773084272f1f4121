// The CUDA driver API (libcuda.so.1, installed with the GPU's driver), loaded at run time:
// tlmc neither links with it nor needs it. Only a process that may initialise CUDA calls
// this, a measurement worker or a child asking about the GPU: the compiler itself forks
// such workers, and a process that has initialised CUDA must not fork one.
#pragma once

#include <cstddef>
#include <string>

namespace tlmc::toolchain {

// The entry points tlmc calls, declared here: the toolkit's cuda.h is not needed to build
// tlmc. CUresult is an int, 0 for success; handles are opaque pointers; a device pointer
// (CUdeviceptr) is an unsigned 64-bit integer.
struct CudaDriver {
  using Handle = void*;
  using DevicePtr = unsigned long long;
  int (*init)(unsigned) = nullptr;
  int (*device_get)(int*, int) = nullptr;
  int (*primary_context_retain)(Handle*, int) = nullptr;
  int (*context_set_current)(Handle) = nullptr;
  int (*context_synchronize)() = nullptr;
  int (*module_load_data)(Handle*, const void*) = nullptr;
  int (*module_unload)(Handle) = nullptr;
  int (*module_get_function)(Handle*, Handle, const char*) = nullptr;
  int (*function_set_attribute)(Handle, int, int) = nullptr;
  int (*mem_alloc)(DevicePtr*, size_t) = nullptr;
  int (*mem_free)(DevicePtr) = nullptr;
  int (*memcpy_to_device)(DevicePtr, const void*, size_t) = nullptr;
  int (*memcpy_to_host)(void*, DevicePtr, size_t) = nullptr;
  int (*memset_d8)(DevicePtr, unsigned char, size_t) = nullptr;
  int (*launch_kernel)(Handle, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       Handle, void**, void**) = nullptr;
  int (*event_create)(Handle*, unsigned) = nullptr;
  int (*event_record)(Handle, Handle) = nullptr;
  int (*event_synchronize)(Handle) = nullptr;
  int (*event_elapsed_ms)(float*, Handle, Handle) = nullptr;
  int (*event_destroy)(Handle) = nullptr;
  int (*error_string)(int, const char**) = nullptr;

  // "CUDA error 700 (an illegal memory access was encountered)".
  std::string error_text(int result) const;
};

// cuda.h's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.
inline constexpr int kMaxDynamicSharedBytesAttribute = 8;

// Loads libcuda.so.1 once per process and binds the entry points (nothing is initialised);
// nullptr, with the reason in `why`, when it does not load or lacks one of them.
const CudaDriver* load_cuda_driver(std::string* why);

}  // namespace tlmc::toolchain
