// Compiling a CUDA target's generated .cu: for the device with nvcc (the CUDA toolkit is
// found at run time, never required to build or run tlmc), or for the CPU emulator with the
// system's C++ compiler. A compile failure is a compiler bug (InternalError, with the log);
// a missing tool is the user's setup (Diagnostic, saying what to install).
#pragma once

#include <string>
#include <vector>

#include "ir/target.h"

namespace tlmc::toolchain {

// nvcc's path: $CUDA_PATH/bin, $CUDA_HOME/bin, PATH, then /usr/local/cuda/bin; "" if none.
std::string find_nvcc();

// Compiles `cu` (a file name inside `dir`) for the target's SM, as SASS for it and PTX for
// newer GPUs, with warnings as errors; returns the object's name.
std::string compile_cuda_object(const std::string& dir, const std::string& cu,
                                const ir::Target& target, bool pic);

// Links `objects` of `dir` (compile_cuda_object's with `pic`, and host objects) by nvcc into
// the shared library `out` (a file name inside `dir`), with the CUDA runtime linked in
// statically: it loads where the GPU's driver is installed, and needs nothing else.
void link_cuda_shared_library(const std::string& dir, const std::vector<std::string>& objects,
                              const std::string& out);

// How hard an emulated library's C++ is optimised. Seen on a 2-core Zen 4 with g++ 12: -O1's
// code ran ResNet-50's kernels in the emulator in 0.6 of the time -Og's took, and cost some
// 0.4 s more to compile for a model of a few kernels (a quarter of the ops tests' time).
enum class EmulatedCode {
  Quick,  // -Og: for little work
  Fast,   // -O1
};

// Compiles `sources` of `dir` (.cu as C++, all of them one translation unit, in their order;
// .S assembled) against the CPU emulator's cuda_runtime.h (`emulator`, its text, written into
// `dir`/emulation/) and links them into the shared library `out` (a file name inside `dir`).
void build_emulated_library(const std::string& dir, const std::vector<std::string>& sources,
                            const std::string& out, const std::string& emulator,
                            EmulatedCode code = EmulatedCode::Fast);

}  // namespace tlmc::toolchain
