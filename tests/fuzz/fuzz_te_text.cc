// The text of a tensor program (the workload a tuning record carries) on any text: read or
// refused with TeTextError; a program read is one the scheduler takes, so its sketches are
// generated too.
#include <cstdint>
#include <string>

#include "ir/target.h"
#include "ir/te_text.h"
#include "scheduler/sketch_rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tlmc::ir::Target target = *tlmc::ir::parse_target("x86-64-avx512");
  tlmc::ir::TeProgram program;
  try {
    program = tlmc::ir::te_from_text(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const tlmc::ir::TeTextError&) {
    return 0;
  }
  tlmc::scheduler::generate_sketches(program, target);
  return 0;
}
