// A language-model checkpoint, on any bytes: loaded or refused with CheckpointError.
#include <cstdint>
#include <string>

#include "lm/checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    tlmc::lm::load_checkpoint_bytes("fuzz.tlm",
                                    std::string(reinterpret_cast<const char*>(data), size));
  } catch (const tlmc::lm::CheckpointError&) {
  }
  return 0;
}
