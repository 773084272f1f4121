#include "toolchain/cuda_driver.h"

#include <dlfcn.h>

#include <initializer_list>
#include <mutex>

namespace tlmc::toolchain {
namespace {

// Binds `f` to the first of `symbols` the library exports (a newer versioned name first).
template <typename F>
bool bind(void* lib, F*& f, std::initializer_list<const char*> symbols) {
  for (const char* s : symbols)
    if ((f = reinterpret_cast<F*>(dlsym(lib, s)))) return true;
  return false;
}

}  // namespace

std::string CudaDriver::error_text(int result) const {
  const char* text = nullptr;
  if (error_string) error_string(result, &text);
  return "CUDA error " + std::to_string(result) + " (" + (text ? text : "unknown") + ")";
}

const CudaDriver* load_cuda_driver(std::string* why) {
  static std::once_flag once;
  static CudaDriver driver;
  static bool loaded = false;
  static std::string reason;
  std::call_once(once, [] {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      reason = "no CUDA driver (libcuda.so.1 does not load)";
      return;
    }
    CudaDriver d;
    // The _v2 names are the ones cuda.h maps the plain names to since CUDA 3.2 (12.8 for
    // cuEventElapsedTime); the plain symbols remain for older callers.
    loaded = bind(lib, d.init, {"cuInit"}) && bind(lib, d.device_get, {"cuDeviceGet"}) &&
             bind(lib, d.primary_context_retain, {"cuDevicePrimaryCtxRetain"}) &&
             bind(lib, d.context_set_current, {"cuCtxSetCurrent"}) &&
             bind(lib, d.context_synchronize, {"cuCtxSynchronize"}) &&
             bind(lib, d.module_load_data, {"cuModuleLoadData"}) &&
             bind(lib, d.module_unload, {"cuModuleUnload"}) &&
             bind(lib, d.module_get_function, {"cuModuleGetFunction"}) &&
             bind(lib, d.function_set_attribute, {"cuFuncSetAttribute"}) &&
             bind(lib, d.mem_alloc, {"cuMemAlloc_v2"}) && bind(lib, d.mem_free, {"cuMemFree_v2"}) &&
             bind(lib, d.memcpy_to_device, {"cuMemcpyHtoD_v2"}) &&
             bind(lib, d.memcpy_to_host, {"cuMemcpyDtoH_v2"}) &&
             bind(lib, d.memset_d8, {"cuMemsetD8_v2"}) &&
             bind(lib, d.launch_kernel, {"cuLaunchKernel"}) &&
             bind(lib, d.event_create, {"cuEventCreate"}) &&
             bind(lib, d.event_record, {"cuEventRecord"}) &&
             bind(lib, d.event_synchronize, {"cuEventSynchronize"}) &&
             bind(lib, d.event_elapsed_ms, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}) &&
             bind(lib, d.event_destroy, {"cuEventDestroy_v2", "cuEventDestroy"}) &&
             bind(lib, d.error_string, {"cuGetErrorString"});
    if (!loaded) {
      reason = "libcuda.so.1 lacks an entry point of the CUDA driver API tlmc uses";
      dlclose(lib);
      return;
    }
    driver = d;
  });
  if (!loaded && why) *why = reason;
  return loaded ? &driver : nullptr;
}

}  // namespace tlmc::toolchain
