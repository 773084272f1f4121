#include "tune/gpu_candidate.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "toolchain/cuda_driver.h"

namespace tlmc::tune {
namespace {

using scheduler::MeasureStatus;
using Driver = toolchain::CudaDriver;

// The GPU of this worker: the driver started and the first device's primary context made
// current, once; `error` says why not.
struct Gpu {
  const Driver* driver = nullptr;
  std::string error;
};

const Gpu& open_gpu() {
  static const Gpu gpu = [] {
    Gpu g;
    std::string why;
    const Driver* d = toolchain::load_cuda_driver(&why);
    if (!d) {
      g.error = why;
      return g;
    }
    int device = 0;
    Driver::Handle context = nullptr;
    if (int e = d->init(0)) {
      g.error = "the CUDA driver does not start: " + d->error_text(e);
    } else if (int e2 = d->device_get(&device, 0)) {
      g.error = "the CUDA driver does not open GPU 0: " + d->error_text(e2);
    } else if (int e3 = d->primary_context_retain(&context, device)) {
      g.error = "no context on GPU 0: " + d->error_text(e3);
    } else if (int e4 = d->context_set_current(context)) {
      g.error = "GPU 0's context cannot be made current: " + d->error_text(e4);
    } else {
      g.driver = d;
    }
    return g;
  }();
  return gpu;
}

// Device memory freed when the candidate is done (while the context lives).
class DeviceBuffers {
 public:
  explicit DeviceBuffers(const Driver& d) : d_(d) {}
  ~DeviceBuffers() {
    for (Driver::DevicePtr p : owned_) d_.mem_free(p);
  }
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  // 0 bytes get a 16-byte buffer: every parameter points somewhere.
  int allocate(size_t bytes, Driver::DevicePtr* p) {
    const int e = d_.mem_alloc(p, std::max<size_t>(bytes, 16));
    if (e == 0) owned_.push_back(*p);
    return e;
  }

 private:
  const Driver& d_;
  std::vector<Driver::DevicePtr> owned_;
};

struct Events {
  explicit Events(const Driver& d) : d_(d) {}
  ~Events() {
    if (start) d_.event_destroy(start);
    if (stop) d_.event_destroy(stop);
  }
  Events(const Events&) = delete;
  Events& operator=(const Events&) = delete;
  const Driver& d_;
  Driver::Handle start = nullptr, stop = nullptr;
};

GpuCandidateResult failed(MeasureStatus status, std::string reason, bool context_lost,
                          bool environment = false) {
  GpuCandidateResult r;
  r.status = status;
  r.reason = std::move(reason);
  r.context_lost = context_lost;
  r.environment = environment;
  return r;
}

// cuda.h's CUresult values that say the machine, not the candidate, failed.
constexpr int kOutOfMemory = 2;              // CUDA_ERROR_OUT_OF_MEMORY
constexpr int kNoBinaryForGpu = 209;         // CUDA_ERROR_NO_BINARY_FOR_GPU
constexpr int kUnsupportedPtxVersion = 222;  // CUDA_ERROR_UNSUPPORTED_PTX_VERSION

// A timed run shorter than this is taken as this long (events resolve about half a
// microsecond), and a repeat runs at most kMaxRunsPerRepeat times.
constexpr double kShortestRun = 1e-6;
constexpr int64_t kMaxRunsPerRepeat = 100000;

}  // namespace

std::string encode_launches(const std::vector<codegen::CudaLaunch>& launches) {
  std::ostringstream out;
  for (const codegen::CudaLaunch& l : launches)
    out << l.kernel << " " << l.blocks << " " << l.threads << " " << l.dynamic_shared_bytes << "\n";
  return out.str();
}

std::vector<codegen::CudaLaunch> decode_launches(const std::string& text) {
  std::vector<codegen::CudaLaunch> out;
  std::istringstream in(text);
  for (codegen::CudaLaunch l; in >> l.kernel >> l.blocks >> l.threads >> l.dynamic_shared_bytes;)
    out.push_back(l);
  return out;
}

GpuCandidateResult run_on_gpu(
    const std::vector<reference::HostTensor>& inputs, std::vector<reference::HostTensor> outputs,
    const std::string& cubin, const std::vector<codegen::CudaLaunch>& launches,
    int64_t scratch_bytes, const GpuRunOptions& options,
    const std::function<std::string(const std::vector<reference::HostTensor>&)>& check) {
  const Gpu& gpu = open_gpu();
  // No GPU in the worker is no fault of the candidate, but it cannot be timed: failed as a
  // crash would be, with the driver's reason.
  if (!gpu.driver) return failed(MeasureStatus::Crashed, gpu.error, true, true);
  const Driver& d = *gpu.driver;
  // Errors before a kernel ran leave the context usable; after, the context may be lost.
  Driver::Handle module = nullptr;
  if (int e = d.module_load_data(&module, cubin.data()))
    return failed(MeasureStatus::CompileError, "the cubin does not load: " + d.error_text(e), false,
                  e == kNoBinaryForGpu || e == kUnsupportedPtxVersion || e == kOutOfMemory);
  struct Unload {
    const Driver& d;
    Driver::Handle m;
    ~Unload() { d.module_unload(m); }
  } unload{d, module};
  std::vector<Driver::Handle> functions;
  for (const codegen::CudaLaunch& l : launches) {
    Driver::Handle f = nullptr;
    if (int e = d.module_get_function(&f, module, l.kernel.c_str()))
      return failed(MeasureStatus::CompileError,
                    "the cubin lacks kernel " + l.kernel + ": " + d.error_text(e), false);
    if (int e = d.function_set_attribute(f, toolchain::kMaxDynamicSharedBytesAttribute,
                                         static_cast<int>(l.dynamic_shared_bytes)))
      return failed(MeasureStatus::CompileError,
                    "kernel " + l.kernel + " cannot have " +
                        std::to_string(l.dynamic_shared_bytes) +
                        " bytes of dynamic shared memory: " + d.error_text(e),
                    false);
    functions.push_back(f);
  }
  // Parameters: the inputs, the outputs (all-ones bytes, NaN for floats, so that an element
  // never written is caught), then the scratch memory.
  DeviceBuffers memory(d);
  std::vector<Driver::DevicePtr> params;
  for (const reference::HostTensor& t : inputs) {
    Driver::DevicePtr p = 0;
    if (int e = memory.allocate(t.bytes.size(), &p))
      return failed(MeasureStatus::Crashed, "cannot allocate an input: " + d.error_text(e), false,
                    true);
    if (int e = d.memcpy_to_device(p, t.bytes.data(), t.bytes.size()))
      return failed(MeasureStatus::Crashed, "cannot upload an input: " + d.error_text(e), true);
    params.push_back(p);
  }
  for (const reference::HostTensor& t : outputs) {
    Driver::DevicePtr p = 0;
    if (int e = memory.allocate(t.bytes.size(), &p))
      return failed(MeasureStatus::Crashed, "cannot allocate an output: " + d.error_text(e), false,
                    true);
    if (int e = d.memset_d8(p, 0xff, std::max<size_t>(t.bytes.size(), 16)))
      return failed(MeasureStatus::Crashed, "cannot fill an output: " + d.error_text(e), true);
    params.push_back(p);
  }
  Driver::DevicePtr scratch = 0;
  if (scratch_bytes > 0)
    if (int e = memory.allocate(static_cast<size_t>(scratch_bytes), &scratch))
      return failed(MeasureStatus::Crashed,
                    "cannot allocate the scratch memory: " + d.error_text(e), false, true);
  params.push_back(scratch);
  std::vector<void*> args;
  for (Driver::DevicePtr& p : params) args.push_back(&p);

  // Enqueues one run: every launch in order, on the default stream.
  auto enqueue = [&]() -> int {
    for (size_t i = 0; i < launches.size(); ++i) {
      const codegen::CudaLaunch& l = launches[i];
      if (int e = d.launch_kernel(
              functions[i], static_cast<unsigned>(l.blocks), 1, 1, static_cast<unsigned>(l.threads),
              1, 1, static_cast<unsigned>(l.dynamic_shared_bytes), nullptr, args.data(), nullptr))
        return e;
    }
    return 0;
  };
  auto lost = [&](const std::string& when, int e) {
    return failed(MeasureStatus::Crashed,
                  "the candidate's run failed " + when + ": " + d.error_text(e), true);
  };
  // A launch refused (too many resources, a bad value) leaves the context usable unless a
  // synchronisation says otherwise.
  if (int e = enqueue()) {
    GpuCandidateResult r = lost("at launch", e);
    r.context_lost = d.context_synchronize() != 0;
    return r;
  }
  if (int e = d.context_synchronize()) return lost("on the GPU", e);
  for (size_t o = 0; o < outputs.size(); ++o)
    if (int e = d.memcpy_to_host(outputs[o].bytes.data(), params[inputs.size() + o],
                                 outputs[o].bytes.size()))
      return lost("copying its outputs back", e);
  if (std::string mismatch = check(outputs); !mismatch.empty())
    return failed(MeasureStatus::WrongResult, mismatch, false);

  Events events(d);
  if (int e = d.event_create(&events.start, 0)) return lost("creating an event", e);
  if (int e = d.event_create(&events.stop, 0)) return lost("creating an event", e);
  // Seconds per run of `n` runs enqueued back to back between two events.
  auto seconds_of = [&](int64_t n, double* seconds) -> int {
    if (int e = d.event_record(events.start, nullptr)) return e;
    for (int64_t i = 0; i < n; ++i)
      if (int e = enqueue()) return e;
    if (int e = d.event_record(events.stop, nullptr)) return e;
    if (int e = d.event_synchronize(events.stop)) return e;
    float ms = 0;
    if (int e = d.event_elapsed_ms(&ms, events.start, events.stop)) return e;
    *seconds = static_cast<double>(ms) * 1e-3 / static_cast<double>(n);
    return 0;
  };
  double once = 0;
  if (int e = seconds_of(1, &once)) return lost("while timed", e);  // the check warmed it
  once = std::max(once, kShortestRun);
  GpuCandidateResult out;
  if (options.slow_seconds > 0 && once > options.slow_seconds) {
    out.seconds = once;
    return out;
  }
  const int64_t n = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(options.min_seconds / once)),
                                        1, kMaxRunsPerRepeat);
  std::vector<double> times;
  for (int r = 0; r < std::max(1, options.repeats); ++r) {
    double t = 0;
    if (int e = seconds_of(n, &t)) return lost("while timed", e);
    times.push_back(t);
  }
  std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
  out.seconds = times[times.size() / 2];
  return out;
}

}  // namespace tlmc::tune
