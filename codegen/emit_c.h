// Writes a planned model as C: NAME.h (the API of spec/driver.md, with a table of inputs
// and outputs), NAME.c (kernels and NAME_run), the runtime with its symbols prefixed
// NAME_rt_, and the weights as a binary blob with the assembler file that embeds it.
#pragma once

#include <string>
#include <vector>

#include "codegen/model_plan.h"
#include "ir/target.h"

namespace tlmc::codegen {

struct GeneratedFile {
  std::string name;      // file name, no folder
  std::string contents;  // text or bytes
};

struct CodegenOptions {
  ir::Target target;
  int default_threads = 0;  // 0: one per online core, decided at run time
  // Time every kernel call (tlmc --profile): NAME_run adds each call's seconds to a static
  // array that `int NAME_profile_read(double* seconds)` copies out (one per call of
  // ModelPlan::calls, their count returned) and resets. For a CUDA target, CUDA events on the
  // stream bracket each call, and it gives the last run's times. Global state: never shipped.
  bool profile = false;
};

// A CUDA target's library is emit_cuda's (codegen/emit_cuda.h).
std::vector<GeneratedFile> emit_c(const ModelPlan& plan, const CodegenOptions& options);
// Only the header (--emit=header).
GeneratedFile emit_header(const ModelPlan& plan, const ir::Target& target);
// The weights blob, NAME_weights.bin, and NAME_weights.S, which embeds it as the hidden
// symbol NAME_weights (64-byte aligned, read-only).
std::vector<GeneratedFile> weights_files(const ModelPlan& plan);
// The runtime's sources as embedded: "tlmc_runtime.h", "tlmc_runtime.c", "tlmc_cuda.h" or the
// CUDA emulator's "cuda_runtime.h".
std::string runtime_file(const std::string& name);

}  // namespace tlmc::codegen
