// Shared by the fuzz harnesses: a private folder for the files a reader must be given by
// path, made once per process and removed at exit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace tlmc::fuzz {

// The folder, made on first use.
const std::string& scratch_dir();
// Writes `size` bytes to scratch_dir()/name and returns the path.
std::string write_scratch(const std::string& name, const uint8_t* data, size_t size);

}  // namespace tlmc::fuzz
