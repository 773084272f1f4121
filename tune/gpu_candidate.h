// One CUDA candidate run on the GPU, inside a measurement worker (tune/measurer.h), never in
// the compiler's own process: its kernels loaded from the cubin NVRTC built, the task's
// inputs uploaded, its launches run in order once and its outputs checked against the
// reference, then the launches timed with CUDA events. The GPU is the first the driver lists
// (CUDA_VISIBLE_DEVICES applies), opened once per worker through its primary context.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/emit_cuda_kernel.h"
#include "reference/interpreter.h"
#include "scheduler/tuning_db.h"

namespace tlmc::tune {

struct GpuRunOptions {
  double min_seconds = 0.005;  // each timed repeat runs the launches at least this long
  int repeats = 5;             // timed repeats; the time is their median
  double slow_seconds = 0;     // > 0: a first timed run slower than this is the time
};

struct GpuCandidateResult {
  scheduler::MeasureStatus status = scheduler::MeasureStatus::Ok;
  double seconds = 0;  // one run of the launches, median over the repeats
  std::string reason;  // why, when not Ok
  // A CUDA error the context does not survive (an illegal address, a failed launch): the
  // worker must exit, and the next candidate runs in a new one.
  bool context_lost = false;
  // The machine failed, not the candidate: no GPU or driver in the worker, a cubin this
  // driver cannot load (a driver older than the toolkit's NVRTC), no device memory.
  bool environment = false;
};

// `inputs`: the kernel's inputs, as its parameters take them; `outputs`: its outputs, their
// sizes (the contents are overwritten); `check` describes the first output element that
// differs from the reference, or returns "".
GpuCandidateResult run_on_gpu(
    const std::vector<reference::HostTensor>& inputs, std::vector<reference::HostTensor> outputs,
    const std::string& cubin, const std::vector<codegen::CudaLaunch>& launches,
    int64_t scratch_bytes, const GpuRunOptions& options,
    const std::function<std::string(const std::vector<reference::HostTensor>&)>& check);

// The launches as one line of text each ("KERNEL BLOCKS THREADS DYNAMIC_SHARED_BYTES"), the
// way the compiler sends them to a worker, and back.
std::string encode_launches(const std::vector<codegen::CudaLaunch>& launches);
std::vector<codegen::CudaLaunch> decode_launches(const std::string& text);

}  // namespace tlmc::tune
