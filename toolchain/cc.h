// Drives the system C compiler over generated sources: objects, a static archive, a shared
// library for isolated runs. The compiler is $CC, else `cc`. A failure here is a compiler
// bug (generated code must always compile), raised as an InternalError with the log.
#pragma once

#include <string>
#include <vector>

#include "ir/target.h"

namespace tlmc::toolchain {

// The C compiler command (from $CC, else "cc").
std::string c_compiler();

// Compiles `sources` (file names inside `dir`) into objects inside `dir`; returns their names.
std::vector<std::string> compile_objects(const std::string& dir,
                                         const std::vector<std::string>& sources,
                                         const ir::Target& target, bool pic);
// Archives objects of `dir` into `archive` (a path), deterministically.
void make_archive(const std::string& dir, const std::vector<std::string>& objects,
                  const std::string& archive);
// Links objects of `dir` into one relocatable object `out` (--emit=obj).
void link_relocatable(const std::string& dir, const std::vector<std::string>& objects,
                      const std::string& out);
// Links objects of `dir` into a shared library `out`.
void link_shared(const std::string& dir, const std::vector<std::string>& objects,
                 const std::string& out);

// Runs a shell command; a failure is a compiler bug: InternalError naming `what`, with the
// command and its output.
void run_or_fail(const std::string& what, const std::string& command);
// Runs a shell command; returns its exit status and combined output.
int run_shell(const std::string& command, std::string* output);
// Quotes a string for /bin/sh.
std::string shell_quote(const std::string& s);

}  // namespace tlmc::toolchain
