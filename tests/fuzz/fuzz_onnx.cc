// The ONNX reader on any bytes. With TLMC_FUZZ_EXTERNAL the input is a model and the file
// of its external data: a 4-byte little-endian length, that many bytes of model, then the
// data, written as weights.data beside it. A model is read or refused with a Diagnostic.
#include <cstdint>
#include <cstring>
#include <string>

#include "frontend/onnx_reader.h"
#include "fuzz_support.h"
#include "ir/diagnostic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t model_size = size;
#ifdef TLMC_FUZZ_EXTERNAL
  if (size < 4) return 0;
  uint32_t n = 0;
  std::memcpy(&n, data, 4);
  data += 4;
  size -= 4;
  model_size = n < size ? n : size;
  tlmc::fuzz::write_scratch("weights.data", data + model_size, size - model_size);
#endif
  const std::string path = tlmc::fuzz::write_scratch("model.onnx", data, model_size);
  try {
    tlmc::frontend::read_onnx_model(path);
  } catch (const tlmc::Diagnostic&) {
  }
  return 0;
}
