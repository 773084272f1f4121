#include "lm/default_model.h"

#include <string>

#include "ir/diagnostic.h"
#include "lm/checkpoint.h"

extern "C" const char tlmc_default_model_begin[];
extern "C" const char tlmc_default_model_end[];
extern "C" const char tlmc_default_cuda_model_begin[];
extern "C" const char tlmc_default_cuda_model_end[];

namespace tlmc::lm {
namespace {

Gpt bundled(const char* name, const char* begin, const char* end) {
  try {
    return load_checkpoint_bytes(name, std::string(begin, end)).model;
  } catch (const CheckpointError& e) {
    fail_assert("the bundled model loads", __FILE__, __LINE__, e.what());
  }
}

}  // namespace

Lineage default_model_lineage(const ir::Target& target) {
  const bool cuda = target.is_cuda();
  const char* begin = cuda ? tlmc_default_cuda_model_begin : tlmc_default_model_begin;
  const char* end = cuda ? tlmc_default_cuda_model_end : tlmc_default_model_end;
  try {
    const Checkpoint c = load_checkpoint_bytes("the bundled model", std::string(begin, end));
    return unlisted_lineage(c.lineage, c.model.parameters());
  } catch (const CheckpointError& e) {
    fail_assert("the bundled model loads", __FILE__, __LINE__, e.what());
  }
}

const Gpt& default_model(const ir::Target& target) {
  if (target.is_cuda()) {
    static const Gpt cuda = bundled("the bundled CUDA model", tlmc_default_cuda_model_begin,
                                    tlmc_default_cuda_model_end);
    return cuda;
  }
  static const Gpt cpu =
      bundled("the bundled model", tlmc_default_model_begin, tlmc_default_model_end);
  return cpu;
}

}  // namespace tlmc::lm
