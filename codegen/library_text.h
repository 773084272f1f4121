// Text both generated libraries (C and CUDA) write: C string literals and comments, and the
// header's description of the model's inputs and outputs (macros and a table).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "codegen/model_plan.h"

namespace tlmc::codegen {

// A C string literal of arbitrary text.
std::string c_string(const std::string& s);
// Text safe inside a C comment.
std::string comment_text(std::string s);
std::string upper(const std::string& s);
// The pointer to a tensor's storage inside the run function: inputs[i], outputs[i], `weights`
// (an expression for the weights' first byte) plus its offset, or ws (the workspace, as
// char*) plus its offset.
std::string storage_pointer(const Storage& s, const std::string& weights);
// The comment above kernel k: its workload key and its schedule, a decision a line.
void kernel_comment(std::ostream& os, size_t k, const KernelInfo& kernel);
// "#define PREFIX0_RANK ..., _SHAPE {...}, _BYTES ...u" for each tensor.
void tensor_macros(std::ostream& os, const std::string& prefix, const std::vector<TensorInfo>& ts);
// The definition of NAME_inputs or NAME_outputs (`which`), a table of NAME_tensor_info.
void tensor_table(std::ostream& os, const std::string& name, const char* which,
                  const std::vector<TensorInfo>& ts);

}  // namespace tlmc::codegen
