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
