// Writes a planned model for a CUDA target: NAME.h (the API below, with the table of inputs
// and outputs), NAME.cu (the kernels, and the host code that launches them in order on a
// stream), NAME_cuda.h (tlmc_cuda.h: the launch and shared-memory macros) and the weights
// blob with its assembler file; NAME_init uploads the weights to the current device.
#pragma once

#include <string>
#include <vector>

#include "codegen/emit_c.h"
#include "codegen/emit_cuda_kernel.h"

namespace tlmc::codegen {

std::vector<GeneratedFile> emit_cuda(const ModelPlan& plan, const CodegenOptions& options);

// The declarations of a CUDA library's API, for its header.
std::string cuda_api_declarations(const ModelPlan& plan);

// NAME_hosted.cu, for tlmc's --check of a CUDA library, in the CPU emulator or on a GPU: a
// host-side entry NAME_hosted_run (and NAME_hosted_workspace_size, 0) with the calling
// convention of a CPU library, which initialises the model once, copies the inputs into
// device memory, runs the model and copies the outputs back, as a program using the library
// on a GPU does. It returns the library's status, or -1 where a CUDA call of its own failed,
// and prints the emulator's message, or CUDA's error.
// With `profile` (a library emitted with CodegenOptions::profile), NAME_hosted_profile_read
// gives NAME_profile_read's times: each call's, between CUDA events, in the last run.
GeneratedFile hosted_harness(const ModelPlan& plan, bool profile);

// The __global__ functions of the .cu emit_cuda writes, each once, in order: name, blocks,
// threads per block and dynamic shared memory on a GPU of `gpu`'s limits.
std::vector<CudaLaunch> cuda_launches(const ModelPlan& plan, const ir::GpuLimits& gpu);

}  // namespace tlmc::codegen
