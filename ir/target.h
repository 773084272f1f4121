// The hardware descriptor that sketch rules, the code generator, the tuning records and (later)
// the language model read: instruction set, vector width, cores and caches, detected on the
// host or named by --target, with a stable text form that keys every tuning record.
#pragma once

#include <optional>
#include <string>

namespace tlmc::ir {

enum class Isa { Generic, Avx2, Avx512 };

struct Target {
  std::string name;             // as given on the command line: "x86-64-avx512", ...
  Isa isa = Isa::Generic;       // Generic: plain C, no explicit SIMD
  int vector_bytes = 16;        // SIMD register width the code generator targets
  int cores = 1;                // threads the generated code runs with by default, and is tuned for
  int l1_bytes = 32 * 1024;     // L1 data cache of one core
  int l2_bytes = 1024 * 1024;   // L2 cache of one core
  int64_t l3_bytes = 0;         // last-level cache, shared; 0 when there is none
  std::string cpu = "generic";  // "vendor-family-model" from cpuid; "generic" if not measured
  bool runs_here = false;       // the host executes this target's code: candidates can be measured
  // Kernels are measured with their constant inputs (weights) out of the caches: a model
  // whose weights exceed the cores' L2 caches reads them from memory in every run. Part of
  // the descriptor (" weights=cold"): warm and cold times are never compared.
  bool cold_weights = false;

  int vector_lanes(size_t element_bytes) const {
    return vector_bytes / static_cast<int>(element_bytes);
  }
  // Architectural vector registers (x86-64: 32 with AVX-512, else 16).
  int vector_registers() const { return isa == Isa::Avx512 ? 32 : 16; }
  // Flags for the system C compiler: "-march=..." and friends.
  std::string cc_flags() const;
  // The stable text form, part of every tuning record's key, so that a record measured on
  // one machine is never used for another ISA, core count, cache hierarchy or processor:
  // "hw1 isa=avx512 vec=64 cores=2 l1d=48K l2=2048K l3=16384K cpu=intel-6-143", then
  // " weights=cold" when cold_weights.
  std::string descriptor() const;
};

// "host", "x86-64", "x86-64-avx2", "x86-64-avx512"; nullopt for an unknown name. A named ISA
// the host can execute takes the host's cores, caches and cpu (its code is measured here);
// otherwise they are fixed defaults and runs_here is false.
std::optional<Target> parse_target(const std::string& name);
// The machine tlmc runs on, detected (never assumed).
Target host_target();
// The target a descriptor describes (as Target::descriptor writes it, or with more words
// after it, which are ignored); runs_here is false and name "x86-64..." by its ISA. nullopt
// when it is not a descriptor.
std::optional<Target> parse_descriptor(const std::string& descriptor);
// The names parse_target accepts, for messages.
std::string target_names();

}  // namespace tlmc::ir
