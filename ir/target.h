// The hardware descriptor that sketch rules, the code generator and (later) the language
// model read: instruction set, vector width, cores and caches.
#pragma once

#include <optional>
#include <string>

namespace tlmc::ir {

enum class Isa { Generic, Avx2, Avx512 };

struct Target {
  std::string name;        // as given on the command line: "x86-64-avx512", ...
  Isa isa = Isa::Generic;  // Generic: plain C, no explicit SIMD
  int vector_bytes = 16;   // SIMD register width the code generator targets
  int cores = 1;           // cores the default thread count uses
  int l1_bytes = 32 * 1024;
  int l2_bytes = 1024 * 1024;

  int vector_lanes(size_t element_bytes) const {
    return vector_bytes / static_cast<int>(element_bytes);
  }
  // Flags for the system C compiler: "-march=..." and friends.
  std::string cc_flags() const;
};

// "host", "x86-64", "x86-64-avx2", "x86-64-avx512"; nullopt for an unknown name.
std::optional<Target> parse_target(const std::string& name);
// The machine tlmc runs on, detected (never assumed).
Target host_target();
// The names parse_target accepts, for messages.
std::string target_names();

}  // namespace tlmc::ir
