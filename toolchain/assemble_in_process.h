// Assembles assembler text held in memory into an x86-64 ELF object held in memory, with
// LLVM's integrated assembler (MC) inside this process; `.incbin` finds its files in
// `include_dir`. Used for the weights' assembler file when tlmc builds a library itself.
#pragma once

#include <string>
#include <vector>

#include "toolchain/clang_in_process.h"

namespace tlmc::toolchain {

InProcessObject assemble_in_process(const std::string& text, const std::string& include_dir);

// compile_objects (toolchain/cc.h) in this process: each source of `dir` (C, or assembler
// ending in .S) compiled or assembled by the libraries into an object beside it; returns the
// objects' names. A failure is an InternalError with the compiler's messages.
std::vector<std::string> compile_objects_in_process(const std::string& dir,
                                                    const std::vector<std::string>& sources,
                                                    const ir::Target& target, bool pic);

}  // namespace tlmc::toolchain
