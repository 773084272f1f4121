// A file of tensor sentences, on any bytes: read or refused with CheckpointError.
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "lm/sentence_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = tlmc::fuzz::write_scratch("sentences.bin", data, size);
  try {
    tlmc::lm::read_sentences(path);
  } catch (const tlmc::lm::CheckpointError&) {
  }
  return 0;
}
