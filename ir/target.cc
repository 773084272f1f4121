#include "ir/target.h"

#include <cpuid.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace tlmc::ir {
namespace {

// The first line of a sysfs file; empty when it cannot be read.
std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// "48K", "2048K", "32M" as sysfs writes cache sizes; 0 when unreadable.
int64_t parse_size(const std::string& s) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) return 0;
  size_t used = 0;
  const int64_t v = std::stoll(s, &used);
  if (used < s.size() && s[used] == 'K') return v * 1024;
  if (used < s.size() && s[used] == 'M') return v * 1024 * 1024;
  return v;
}

// The host's caches, from sysfs (cpu0's view), else from sysconf; defaults stay otherwise.
void detect_caches(Target& t) {
  int64_t l1 = 0, l2 = 0, l3 = 0;
  for (int i = 0; i < 8; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string level = read_line(dir + "level"), type = read_line(dir + "type");
    if (level.empty()) break;
    const int64_t size = parse_size(read_line(dir + "size"));
    if (level == "1" && type == "Data") l1 = size;
    if (level == "2") l2 = size;
    if (level == "3") l3 = size;
  }
  if (l1 == 0) l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
  if (l2 == 0) l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l3 == 0) l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l1 > 0) t.l1_bytes = static_cast<int>(l1);
  if (l2 > 0) t.l2_bytes = static_cast<int>(l2);
  t.l3_bytes = l3 > 0 ? l3 : 0;
}

// "intel-6-143" / "amd-25-17": vendor, family and model as cpuid reports them.
std::string detect_cpu() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return "unknown";
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  const std::string v = vendor;
  std::string name = v == "GenuineIntel" ? "intel" : v == "AuthenticAMD" ? "amd" : "x86";
  if (!__get_cpuid(1, &a, &b, &c, &d)) return name;
  unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
  if (family == 0xf) family += (a >> 20) & 0xff;
  if (family == 0x6 || family >= 0xf) model += ((a >> 16) & 0xf) << 4;
  return name + "-" + std::to_string(family) + "-" + std::to_string(model);
}

Isa host_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq"))
    return Isa::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::Avx2;
  return Isa::Generic;
}

// Can code for `isa` run on a host whose best ISA is `host`?
bool executes(Isa host, Isa isa) { return static_cast<int>(isa) <= static_cast<int>(host); }

Target make(const std::string& name, Isa isa) {
  Target t;
  t.name = name;
  t.isa = isa;
  t.vector_bytes = isa == Isa::Avx512 ? 64 : isa == Isa::Avx2 ? 32 : 16;
  t.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!executes(host_isa(), isa)) return t;
  t.runs_here = true;
  detect_caches(t);
  t.cpu = detect_cpu();
  return t;
}

std::string_view isa_name(Isa isa) {
  switch (isa) {
    case Isa::Generic:
      return "generic";
    case Isa::Avx2:
      return "avx2";
    case Isa::Avx512:
      return "avx512";
  }
  return "";
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

std::string Target::descriptor() const {
  std::ostringstream os;
  os << "hw1 isa=" << isa_name(isa) << " vec=" << vector_bytes << " cores=" << cores
     << " l1d=" << l1_bytes / 1024 << "K l2=" << l2_bytes / 1024 << "K l3=" << l3_bytes / 1024
     << "K cpu=" << cpu;
  if (cold_weights) os << " weights=cold";
  return os.str();
}

Target host_target() {
  const Isa isa = host_isa();
  return make(isa == Isa::Avx512 ? "x86-64-avx512"
              : isa == Isa::Avx2 ? "x86-64-avx2"
                                 : "x86-64",
              isa);
}

std::optional<Target> parse_target(const std::string& name) {
  if (name == "host") return host_target();
  if (name == "x86-64") return make(name, Isa::Generic);
  if (name == "x86-64-avx2") return make(name, Isa::Avx2);
  if (name == "x86-64-avx512") return make(name, Isa::Avx512);
  return std::nullopt;
}

std::optional<Target> parse_descriptor(const std::string& descriptor) {
  std::istringstream in(descriptor);
  std::string word;
  if (!(in >> word) || word != "hw1") return std::nullopt;
  Target t;
  auto field = [&](const char* key) -> std::optional<std::string> {
    if (!(in >> word) || word.rfind(key, 0) != 0) return std::nullopt;
    return word.substr(std::string(key).size());
  };
  auto kib = [](const std::string& v) -> std::optional<int64_t> {
    if (v.empty() || v.back() != 'K') return std::nullopt;
    try {
      size_t used = 0;
      const int64_t k = std::stoll(v, &used);
      if (used != v.size() - 1 || k < 0 || k > (int64_t{1} << 40)) return std::nullopt;
      return k * 1024;
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  const std::optional<std::string> isa = field("isa="), vec = field("vec="),
                                   cores = field("cores="), l1 = field("l1d="), l2 = field("l2="),
                                   l3 = field("l3="), cpu = field("cpu=");
  if (!isa || !vec || !cores || !l1 || !l2 || !l3 || !cpu) return std::nullopt;
  bool known = false;
  for (Isa i : {Isa::Generic, Isa::Avx2, Isa::Avx512})
    if (isa_name(i) == *isa) {
      t.isa = i;
      known = true;
    }
  if (!known) return std::nullopt;
  t.name = t.isa == Isa::Avx512 ? "x86-64-avx512" : t.isa == Isa::Avx2 ? "x86-64-avx2" : "x86-64";
  try {
    t.vector_bytes = std::stoi(*vec);
    t.cores = std::stoi(*cores);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::optional<int64_t> l1b = kib(*l1), l2b = kib(*l2), l3b = kib(*l3);
  if (!l1b || !l2b || !l3b || t.vector_bytes < 1 || t.cores < 1 || *l1b > INT32_MAX ||
      *l2b > INT32_MAX)
    return std::nullopt;
  t.l1_bytes = static_cast<int>(*l1b);
  t.l2_bytes = static_cast<int>(*l2b);
  t.l3_bytes = *l3b;
  t.cpu = *cpu;
  t.cold_weights = (in >> word) && word == "weights=cold";
  return t;
}

std::string target_names() { return "host, x86-64, x86-64-avx2, x86-64-avx512"; }

}  // namespace tlmc::ir
