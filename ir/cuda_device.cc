#include "ir/cuda_device.h"

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cstring>
#include <mutex>

namespace tlmc::ir {
namespace {

// The driver API's attribute numbers (cuda.h, CUdevice_attribute); stable across releases.
enum Attribute : int {
  kMaxThreadsPerBlock = 1,
  kMaxSharedMemoryPerBlock = 8,
  kWarpSize = 10,
  kMaxRegistersPerBlock = 12,
  kClockRateKhz = 13,
  kMultiprocessorCount = 16,
  kMemoryClockRateKhz = 36,
  kGlobalMemoryBusWidth = 37,
  kL2CacheSize = 38,
  kMaxThreadsPerMultiprocessor = 39,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  kMaxSharedMemoryPerMultiprocessor = 81,
  kMaxRegistersPerMultiprocessor = 82,
  kMaxSharedMemoryPerBlockOptin = 97,
  kMaxBlocksPerMultiprocessor = 106,
};

// What the child sends back: the attributes in the order above, then the device's name.
constexpr std::array<int, 16> kAsked = {kMaxThreadsPerBlock,
                                        kMaxSharedMemoryPerBlock,
                                        kWarpSize,
                                        kMaxRegistersPerBlock,
                                        kClockRateKhz,
                                        kMultiprocessorCount,
                                        kMemoryClockRateKhz,
                                        kGlobalMemoryBusWidth,
                                        kL2CacheSize,
                                        kMaxThreadsPerMultiprocessor,
                                        kComputeCapabilityMajor,
                                        kComputeCapabilityMinor,
                                        kMaxSharedMemoryPerMultiprocessor,
                                        kMaxRegistersPerMultiprocessor,
                                        kMaxSharedMemoryPerBlockOptin,
                                        kMaxBlocksPerMultiprocessor};

struct Reply {
  char error[200];  // empty when the values are valid
  std::array<int, kAsked.size()> values;
  char name[128];
  int driver_version;  // 0 when not known
};

int driver_version_found = 0;  // of the last answer: find_cuda_gpu asks once

// In the child: loads the driver and asks it about device 0.
Reply ask_driver() {
  Reply r{};
  auto fail = [&r](const std::string& why) {
    std::snprintf(r.error, sizeof r.error, "%s", why.c_str());
    return r;
  };
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return fail("no CUDA driver (libcuda.so.1 does not load)");
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  using Get = int (*)(int*, int);
  using Name = int (*)(char*, int, int);
  using Attr = int (*)(int*, int, int);
  using Version = int (*)(int*);
  if (auto version = reinterpret_cast<Version>(dlsym(lib, "cuDriverGetVersion")))
    if (version(&r.driver_version) != 0) r.driver_version = 0;
  auto init = reinterpret_cast<Init>(dlsym(lib, "cuInit"));
  auto count = reinterpret_cast<Count>(dlsym(lib, "cuDeviceGetCount"));
  auto get = reinterpret_cast<Get>(dlsym(lib, "cuDeviceGet"));
  auto name = reinterpret_cast<Name>(dlsym(lib, "cuDeviceGetName"));
  auto attr = reinterpret_cast<Attr>(dlsym(lib, "cuDeviceGetAttribute"));
  if (!init || !count || !get || !name || !attr) return fail("libcuda.so.1 lacks the driver API");
  if (int e = init(0); e != 0)
    return fail("the CUDA driver does not start (cuInit: error " + std::to_string(e) + ")");
  int n = 0;
  if (count(&n) != 0 || n < 1) return fail("the CUDA driver lists no GPU");
  int device = 0;
  if (get(&device, 0) != 0) return fail("the CUDA driver does not open GPU 0");
  for (size_t i = 0; i < kAsked.size(); ++i)
    if (attr(&r.values[i], kAsked[i], device) != 0)
      return fail("the CUDA driver does not report attribute " + std::to_string(kAsked[i]));
  if (name(r.name, sizeof r.name - 1, device) != 0) std::snprintf(r.name, sizeof r.name, "gpu");
  return r;
}

// "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3".
std::string device_label(const char* name) {
  std::string out;
  for (const char* c = name; *c; ++c) {
    const unsigned char u = static_cast<unsigned char>(*c);
    if (std::isalnum(u))
      out += static_cast<char>(std::tolower(u));
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "gpu" : out;
}

std::optional<GpuLimits> ask_in_child(std::string* why) {
  int fds[2];
  if (pipe(fds) != 0) {
    *why = "cannot open a pipe to ask the CUDA driver";
    return std::nullopt;
  }
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    *why = "cannot fork to ask the CUDA driver";
    return std::nullopt;
  }
  if (pid == 0) {
    close(fds[0]);
    const Reply r = ask_driver();
    const char* p = reinterpret_cast<const char*>(&r);
    size_t left = sizeof r;
    while (left > 0) {
      const ssize_t n = write(fds[1], p, left);
      if (n <= 0) break;
      p += n;
      left -= static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  Reply r{};
  char* p = reinterpret_cast<char*>(&r);
  size_t got = 0;
  while (got < sizeof r) {
    const ssize_t n = read(fds[0], p + got, sizeof r - got);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != sizeof r) {
    *why = "the process asking the CUDA driver stopped without an answer";
    return std::nullopt;
  }
  r.error[sizeof r.error - 1] = 0;
  r.name[sizeof r.name - 1] = 0;
  driver_version_found = r.driver_version;
  if (r.error[0]) {
    *why = r.error;
    return std::nullopt;
  }
  auto v = [&r](Attribute a) {
    for (size_t i = 0; i < kAsked.size(); ++i)
      if (kAsked[i] == a) return r.values[i];
    return 0;
  };
  GpuLimits g;
  g.sm = v(kComputeCapabilityMajor) * 10 + v(kComputeCapabilityMinor);
  g.sms = v(kMultiprocessorCount);
  g.warp = v(kWarpSize);
  g.threads_per_block = v(kMaxThreadsPerBlock);
  g.threads_per_sm = v(kMaxThreadsPerMultiprocessor);
  g.blocks_per_sm = v(kMaxBlocksPerMultiprocessor);
  g.regs_per_sm = v(kMaxRegistersPerMultiprocessor);
  g.regs_per_block = v(kMaxRegistersPerBlock);
  g.regs_per_thread = 255;  // every SM since sm_35; the driver has no attribute for it
  g.smem_per_block = v(kMaxSharedMemoryPerBlock);
  g.smem_optin_per_block = v(kMaxSharedMemoryPerBlockOptin);
  g.smem_per_sm = v(kMaxSharedMemoryPerMultiprocessor);
  g.l2_bytes = v(kL2CacheSize);
  // Double data rate: two transfers of the bus width per memory clock.
  g.bandwidth_gbs =
      static_cast<int>(2.0 * v(kMemoryClockRateKhz) * 1e3 * (v(kGlobalMemoryBusWidth) / 8.0) / 1e9);
  g.fp32_gflops =
      static_cast<int>(2.0 * g.sms * fp32_lanes_per_sm(g.sm) * v(kClockRateKhz) * 1e3 / 1e9);
  g.device = device_label(r.name);
  return g;
}

}  // namespace

int cuda_driver_version() {
  find_cuda_gpu(nullptr);
  return driver_version_found;
}

int fp32_lanes_per_sm(int sm) { return sm <= 80 ? 64 : 128; }

std::optional<GpuLimits> find_cuda_gpu(std::string* why) {
  static std::once_flag once;
  static std::optional<GpuLimits> found;
  static std::string reason;
  std::call_once(once, [] { found = ask_in_child(&reason); });
  if (!found && why) *why = reason;
  return found;
}

}  // namespace tlmc::ir
