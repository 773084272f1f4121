#include "lm/default_model.h"

#include <string>

#include "ir/diagnostic.h"
#include "lm/checkpoint.h"

extern "C" const char tlmc_default_model_begin[];
extern "C" const char tlmc_default_model_end[];

namespace tlmc::lm {

const Gpt& default_model() {
  static const Gpt model = [] {
    std::string bytes(tlmc_default_model_begin, tlmc_default_model_end);
    try {
      return load_checkpoint_bytes("the bundled model", std::move(bytes)).model;
    } catch (const CheckpointError& e) {
      fail_assert("the bundled model loads", __FILE__, __LINE__, e.what());
    }
  }();
  return model;
}

}  // namespace tlmc::lm
