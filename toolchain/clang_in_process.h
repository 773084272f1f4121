// Compiles C held in memory into an x86-64 ELF object held in memory, with the Clang and
// LLVM libraries inside this process: no process is started, and C compiled before comes
// from the object cache (object_cache.h). Each call has its own compiler instance, so
// threads may compile at once.
#pragma once

#include <string>
#include <vector>

#include "ir/target.h"

namespace tlmc::toolchain {

struct InProcessObject {
  bool ok = false;
  std::string object;       // the ELF relocatable object's bytes
  std::string diagnostics;  // Clang's messages (errors make ok false)
};

// `flags` are clang driver flags ("-O3", "-march=...").
InProcessObject compile_c_in_process(const std::string& source,
                                     const std::vector<std::string>& flags);

// The flags generated code is compiled with, for the system compiler and in process alike:
// C11, -O3, the target's -march, -fno-math-errno and -ffp-contract=fast (never -ffast-math:
// infinities and NaNs keep their IEEE meaning).
std::vector<std::string> generated_code_flags(const ir::Target& target);

}  // namespace tlmc::toolchain
