// A schedule as a tuning record stores it, on any text, against a fixed matrix product
// with a fused epilogue: read into decisions that apply, or refused (nullopt), never
// anything else.
#include <cstdint>
#include <string>

#include "ir/target.h"
#include "ir/te_text.h"
#include "scheduler/sketch.h"

namespace {
// A 8x10x256 product and its bias, as `tlmc lm sample` writes it for examples/mlp.yaml.
const char* kProgram = R"(tlmc-te 1
vars 5 tensors 5 stages 2
tensor act float32 2 8 256 -1 0
tensor fc2.w float32 2 10 256 -1 1
tensor logits.mm float32 2 8 10 0 0
tensor fc2.b float32 1 10 -1 1
tensor logits float32 2 8 10 1 0
stage logits.mm 2 gemm sum 2 0 i 8 1 j 10 1 2 k 256
  b * l float32 0 2 v 0 i v 2 k l float32 1 2 v 1 j v 2 k
stage logits 4 gemm none 2 3 i0 8 4 i1 10 0
  b + l float32 2 2 v 3 i0 v 4 i1 l float32 3 1 v 4 i1
inputs 3 0 1 3
outputs 1 4
end
)";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tlmc::ir::Target target = *tlmc::ir::parse_target("x86-64-avx512");
  static const tlmc::ir::TeProgram program = tlmc::ir::te_from_text(kProgram);
  tlmc::scheduler::schedule_from_record(std::string(reinterpret_cast<const char*>(data), size),
                                        program, target);
  return 0;
}
