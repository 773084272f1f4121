// Runs a model's generated C built with sanitizers (`tlmc --check --sanitize`): the sources
// and a small main are compiled by the system C compiler ($CC, else cc) at -O0 with
// -fsanitize=address,undefined into a program of their own, since a sanitized library cannot
// be loaded into tlmc (the sanitizers' runtime must start first). Every input, output and the
// workspace is its own allocation of exactly its size, so a read or write one element past
// any of them is reported; outputs start as all-ones bytes. A report of either sanitizer
// ends the run (-fno-sanitize-recover), as does a leak.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/target.h"

namespace tlmc::toolchain {

struct SanitizedRun {
  bool ok = false;
  std::string message;                        // not ok: the build's or the run's report
  std::vector<std::vector<uint8_t>> outputs;  // ok only
};

// `sources`: the files in `dir` that make the library (C and assembly); `header` declares
// NAME_run and NAME_workspace_size of the model `name`.
SanitizedRun run_sanitized(const std::string& dir, const std::vector<std::string>& sources,
                           const std::string& header, const std::string& name,
                           const ir::Target& target,
                           const std::vector<std::vector<uint8_t>>& inputs,
                           const std::vector<size_t>& output_bytes, int timeout_seconds);

}  // namespace tlmc::toolchain
