// Emits one loop-nest kernel as C11: a static function taking its buffers, with parallel
// loops outlined for the runtime's thread pool and vectorized loops written with GCC/Clang
// vector extensions for the target's SIMD width (plain C for a generic target). Needs a
// program that passes verify_loops; the text compiles without warnings under gcc and clang.
#pragma once

#include <string>

#include "ir/loop.h"
#include "ir/target.h"

namespace tlmc::codegen {

struct KernelSource {
  std::string text;  // helper functions, then the kernel function
  std::string
      signature;  // "static void NAME(const float* restrict b0, ..., char* restrict scratch)"
};

// `rt` is the runtime's symbol prefix ("<model>_rt_").
KernelSource emit_kernel(const ir::LoopProgram& p, const ir::Target& target, const std::string& rt);

// Type definitions and inline helpers the kernels use (vector types, floor division, ...).
std::string kernel_preamble(const ir::Target& target, bool half_floats = false,
                            bool tile_products = false);
// Whether a kernel stores a tensor as float16 or bfloat16, whose conversions its preamble
// must then define (kernel_preamble's half_floats).
bool uses_half_floats(const ir::LoopProgram& p);
// Whether a kernel has tile products (AMX or AVX512_BF16 instructions: kernel_preamble's
// tile_products): its caller runs it only once bf16_unusable(target, rt) is false.
bool uses_tile_products(const ir::LoopProgram& p);
// The C condition, true where this CPU cannot run `target`'s tile products: the runtime's
// bf16_ready for the target's unit (`rt`: the runtime's symbol prefix).
std::string bf16_unusable(const ir::Target& target, const std::string& rt);

}  // namespace tlmc::codegen
