// The YAML graph reader on any text: a model is read or refused with a Diagnostic, never
// anything else. Its folder holds a weight file, so `file:` weights are read too.
#include <cstdint>
#include <string>

#include "frontend/yaml_reader.h"
#include "fuzz_support.h"
#include "ir/diagnostic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string weights = [] {
    std::string bytes(4096, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 37);
    return tlmc::fuzz::write_scratch("w.bin", reinterpret_cast<const uint8_t*>(bytes.data()),
                                     bytes.size());
  }();
  (void)weights;
  try {
    tlmc::frontend::read_yaml_text(std::string(reinterpret_cast<const char*>(data), size),
                                   tlmc::fuzz::scratch_dir() + "/m.yaml");
  } catch (const tlmc::Diagnostic&) {
  }
  return 0;
}
