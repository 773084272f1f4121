#include "ir/target.h"

#include <thread>

namespace tlmc::ir {
namespace {

Target make(const std::string& name, Isa isa) {
  Target t;
  t.name = name;
  t.isa = isa;
  t.vector_bytes = isa == Isa::Avx512 ? 64 : isa == Isa::Avx2 ? 32 : 16;
  t.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return t;
}

}  // namespace

std::string Target::cc_flags() const {
  switch (isa) {
    case Isa::Generic:
      return "-march=x86-64";
    case Isa::Avx2:
      return "-march=haswell";
    case Isa::Avx512:
      return "-march=skylake-avx512 -mprefer-vector-width=512";
  }
  return "";
}

Target host_target() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return make("x86-64-avx512", Isa::Avx512);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return make("x86-64-avx2", Isa::Avx2);
#endif
  return make("x86-64", Isa::Generic);
}

std::optional<Target> parse_target(const std::string& name) {
  if (name == "host") return host_target();
  if (name == "x86-64") return make(name, Isa::Generic);
  if (name == "x86-64-avx2") return make(name, Isa::Avx2);
  if (name == "x86-64-avx512") return make(name, Isa::Avx512);
  return std::nullopt;
}

std::string target_names() { return "host, x86-64, x86-64-avx2, x86-64-avx512"; }

}  // namespace tlmc::ir
