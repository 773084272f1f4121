#include "ir/target.h"

#include <cpuid.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "ir/cuda_device.h"

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

// AMX counts where the CPU has its tiles and bf16 products and Linux saves their state; a
// process must still ask Linux for the permission to use the tiles (arch_prctl) before it
// does, which code that uses AMX will do when it starts.
Bf16Unit host_bf16() {
  __builtin_cpu_init();
  if (host_isa() != Isa::Avx512 || !__builtin_cpu_supports("avx512bf16")) return Bf16Unit::None;
  // AMX-TILE and AMX-BF16: CPUID leaf 7 EDX bits 24 and 22; Linux saves tile state when
  // XCR0 has bits 17 and 18 (XTILECFG, XTILEDATA).
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(d & (1u << 24)) || !(d & (1u << 22)))
    return Bf16Unit::Avx512Bf16;
  unsigned xcr0_low = 0, xcr0_high = 0;
  __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  const unsigned tiles = (1u << 17) | (1u << 18);
  return (xcr0_low & tiles) == tiles ? Bf16Unit::Amx : Bf16Unit::Avx512Bf16;
}

// Can code for `isa` run on a host whose best ISA is `host`?
bool executes(Isa host, Isa isa) { return static_cast<int>(isa) <= static_cast<int>(host); }

Target make(const std::string& name, Isa isa, Bf16Unit bf16 = Bf16Unit::None) {
  Target t;
  t.name = name;
  t.isa = isa;
  t.bf16 = bf16;
  t.vector_bytes = isa == Isa::Avx512 ? 64 : isa == Isa::Avx2 ? 32 : 16;
  t.cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (!executes(host_isa(), isa) || static_cast<int>(host_bf16()) < static_cast<int>(bf16))
    return t;
  t.runs_here = true;
  detect_caches(t);
  t.cpu = detect_cpu();
  return t;
}

// The GPUs --target names: an A100-SXM (80 GB) and an H100-SXM, from their data sheets.
GpuLimits named_gpu(int sm) {
  GpuLimits g;  // an A100-SXM's
  if (sm == 90) {
    g.sm = 90;
    g.sms = 132;
    g.smem_optin_per_block = 227 * 1024;
    g.smem_per_sm = 228 * 1024;
    g.l2_bytes = 50LL * 1024 * 1024;
    g.bandwidth_gbs = 3352;
    g.fp32_gflops = 66908;  // 132 SMs x 128 lanes x 2 x 1.98 GHz
    g.device = "h100-sxm";
  }
  return g;
}

Target make_cuda(const std::string& name, int sm) {
  Target t;
  t.name = name;
  t.kind = TargetKind::Cuda;
  t.gpu = named_gpu(sm);
  std::string why;
  if (std::optional<GpuLimits> here = find_cuda_gpu(&why); here && here->sm == sm) {
    t.gpu = *here;
    t.runs_here = true;
  }
  return t;
}

// "48K" for whole KiB, else the bytes: how descriptors write sizes.
std::string size_text(int64_t bytes) {
  return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + "K" : std::to_string(bytes);
}

// A count with an optional unit after it ("3352GB/s" with unit "GB/s", or "3352");
// nullopt unless it is a whole number in [1, 2^40].
std::optional<int64_t> parse_count(const std::string& v, const std::string& unit) {
  std::string digits = v;
  if (!unit.empty() && digits.size() > unit.size() &&
      digits.compare(digits.size() - unit.size(), unit.size(), unit) == 0)
    digits.resize(digits.size() - unit.size());
  if (digits.empty() || digits.size() > 13 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  const int64_t n = std::stoll(digits);
  if (n < 1 || n > (int64_t{1} << 40)) return std::nullopt;
  return n;
}

// A size: bytes, or KiB with "K", or MiB with "M".
std::optional<int64_t> parse_size_text(const std::string& v) {
  if (v.empty()) return std::nullopt;
  const char last = v.back();
  const int64_t scale = last == 'K' ? 1024 : last == 'M' ? 1024 * 1024 : 1;
  std::optional<int64_t> n = parse_count(scale == 1 ? v : v.substr(0, v.size() - 1), "");
  if (!n || *n > (int64_t{1} << 40) / scale) return std::nullopt;
  return *n * scale;
}

// Why a GPU's limits cannot be those of a CUDA GPU tlmc targets; empty when they can.
std::string gpu_limits_error(const GpuLimits& g) {
  if (g.sm < 80)
    return "sm " + std::to_string(g.sm) + " is older than sm_80, the oldest SM tlmc targets";
  if (g.warp != 32) return "warp is 32 on every NVIDIA GPU";
  if (g.threads_per_block % g.warp != 0) return "threads/block must be a multiple of the warp (32)";
  if (g.threads_per_block > g.threads_per_sm) return "threads/block exceeds threads/sm";
  if (g.regs_per_thread > 255) return "regs/thread is at most 255 on every NVIDIA GPU";
  if (g.regs_per_thread < 16) return "regs/thread is at least 16 (ptxas's least register budget)";
  if (g.regs_per_block > g.regs_per_sm) return "regs/block exceeds regs/sm";
  if (g.regs_per_block < 16 * g.threads_per_block)
    return "regs/block must hold 16 registers for each of threads/block";
  if (g.smem_per_block > g.smem_optin_per_block) return "smem/block exceeds smem/block-optin";
  if (g.smem_optin_per_block > g.smem_per_sm) return "smem/block-optin exceeds smem/sm";
  return "";
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
  if (is_cuda()) {
    const GpuLimits& g = gpu;
    os << "gpu1 sm=" << g.sm << " sms=" << g.sms << " warp=" << g.warp
       << " threads/block=" << g.threads_per_block << " threads/sm=" << g.threads_per_sm
       << " blocks/sm=" << g.blocks_per_sm << " regs/sm=" << g.regs_per_sm
       << " regs/block=" << g.regs_per_block << " regs/thread=" << g.regs_per_thread
       << " smem/block=" << size_text(g.smem_per_block)
       << " smem/block-optin=" << size_text(g.smem_optin_per_block)
       << " smem/sm=" << size_text(g.smem_per_sm) << " l2=" << size_text(g.l2_bytes)
       << " bw=" << g.bandwidth_gbs << "GB/s fp32=" << g.fp32_gflops << "GF/s device=" << g.device;
    return os.str();
  }
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
              isa, host_bf16());
}

std::optional<Target> parse_target(const std::string& name) {
  if (name == "host") return host_target();
  if (name == "x86-64") return make(name, Isa::Generic);
  if (name == "x86-64-avx2") return make(name, Isa::Avx2);
  if (name == "x86-64-avx512") return make(name, Isa::Avx512);
  if (name == "x86-64-avx512-bf16") return make(name, Isa::Avx512, Bf16Unit::Avx512Bf16);
  if (name == "x86-64-amx") return make(name, Isa::Avx512, Bf16Unit::Amx);
  if (name == "cuda-sm80") return make_cuda(name, 80);
  if (name == "cuda-sm90") return make_cuda(name, 90);
  if (name == "cuda") {
    std::optional<GpuLimits> here = find_cuda_gpu(nullptr);
    if (!here || !gpu_limits_error(*here).empty()) return std::nullopt;
    Target t;
    t.name = name;
    t.kind = TargetKind::Cuda;
    t.gpu = *here;
    t.runs_here = true;
    return t;
  }
  return std::nullopt;
}

std::string unknown_target(const std::string& name) {
  if (name == "cuda") {
    std::string why;
    std::optional<GpuLimits> here = find_cuda_gpu(&why);
    if (here)
      why = "the GPU found, " + here->device + ", is sm_" + std::to_string(here->sm) + ": " +
            gpu_limits_error(*here);
    return "--target cuda is the GPU of this machine, and there is none here (" + why +
           "); name one instead: cuda-sm80 or cuda-sm90";
  }
  if (name.rfind("cuda-sm", 0) == 0) {
    const std::optional<int64_t> sm = parse_count(name.substr(7), "");
    if (sm && *sm < 80)
      return "CUDA 13 has no sm_" + std::to_string(*sm) +
             ": it dropped Volta (the V100's sm_70) and older GPUs, which tlmc therefore "
             "cannot target; name cuda-sm80 or cuda-sm90";
    return "unknown CUDA target '" + name + "': tlmc names cuda-sm80 and cuda-sm90 (or cuda, " +
           "the GPU of this machine; --target-option adjusts a named one's limits)";
  }
  return "unknown target '" + name + "' (known: " + target_names() + ")";
}

namespace {

// A descriptor's fields, read without checking that a GPU's limits agree with each other.
std::optional<Target> parse_fields(const std::string& descriptor) {
  std::istringstream in(descriptor);
  std::string word;
  if (!(in >> word) || (word != "hw1" && word != "gpu1")) return std::nullopt;
  const bool gpu = word == "gpu1";
  Target t;
  auto field = [&](const char* key) -> std::optional<std::string> {
    if (!(in >> word) || word.rfind(key, 0) != 0) return std::nullopt;
    return word.substr(std::string(key).size());
  };
  if (gpu) {
    t.kind = TargetKind::Cuda;
    GpuLimits& g = t.gpu;
    struct IntField {
      const char* key;
      int* value;
      const char* unit;  // "K": a size
    };
    const IntField ints[] = {{"sm=", &g.sm, ""},
                             {"sms=", &g.sms, ""},
                             {"warp=", &g.warp, ""},
                             {"threads/block=", &g.threads_per_block, ""},
                             {"threads/sm=", &g.threads_per_sm, ""},
                             {"blocks/sm=", &g.blocks_per_sm, ""},
                             {"regs/sm=", &g.regs_per_sm, ""},
                             {"regs/block=", &g.regs_per_block, ""},
                             {"regs/thread=", &g.regs_per_thread, ""},
                             {"smem/block=", &g.smem_per_block, "K"},
                             {"smem/block-optin=", &g.smem_optin_per_block, "K"},
                             {"smem/sm=", &g.smem_per_sm, "K"}};
    for (const IntField& f : ints) {
      const std::optional<std::string> v = field(f.key);
      if (!v) return std::nullopt;
      const std::optional<int64_t> n =
          std::string(f.unit) == "K" ? parse_size_text(*v) : parse_count(*v, "");
      if (!n || *n > INT32_MAX) return std::nullopt;
      *f.value = static_cast<int>(*n);
    }
    const std::optional<std::string> l2 = field("l2="), bw = field("bw="), fp32 = field("fp32="),
                                     device = field("device=");
    if (!l2 || !bw || !fp32 || !device || device->empty()) return std::nullopt;
    const std::optional<int64_t> l2b = parse_size_text(*l2), bwv = parse_count(*bw, "GB/s"),
                                 fpv = parse_count(*fp32, "GF/s");
    if (!l2b || !bwv || !fpv || *bwv > INT32_MAX || *fpv > INT32_MAX) return std::nullopt;
    g.l2_bytes = *l2b;
    g.bandwidth_gbs = static_cast<int>(*bwv);
    g.fp32_gflops = static_cast<int>(*fpv);
    g.device = *device;
    t.name = "cuda-sm" + std::to_string(g.sm);
    return t;
  }
  auto kib = [](const std::string& v) -> std::optional<int64_t> {
    if (v.empty() || (v.back() != 'K' && v.back() != 'M')) return std::nullopt;
    if (v == "0K") return 0;  // l3 of a machine without one
    return parse_size_text(v);
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
  const std::optional<int64_t> vec_bytes = parse_count(*vec, ""),
                               core_count = parse_count(*cores, "");
  const std::optional<int64_t> l1b = kib(*l1), l2b = kib(*l2), l3b = kib(*l3);
  if (!vec_bytes || !core_count || *vec_bytes > 4096 || *core_count > 65536 || !l1b || !l2b ||
      !l3b || *l1b > INT32_MAX || *l2b > INT32_MAX)
    return std::nullopt;
  t.vector_bytes = static_cast<int>(*vec_bytes);
  t.cores = static_cast<int>(*core_count);
  t.l1_bytes = static_cast<int>(*l1b);
  t.l2_bytes = static_cast<int>(*l2b);
  t.l3_bytes = *l3b;
  t.cpu = *cpu;
  t.cold_weights = (in >> word) && word == "weights=cold";
  return t;
}

}  // namespace

std::optional<Target> parse_descriptor(const std::string& descriptor) {
  std::optional<Target> t = parse_fields(descriptor);
  if (t && t->is_cuda() && !gpu_limits_error(t->gpu).empty()) return std::nullopt;
  return t;
}

std::string set_target_option(Target& target, const std::string& key_value) {
  const size_t eq = key_value.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == key_value.size())
    return "--target-option takes KEY=VALUE (such as cores=4 or smem/block-optin=99K), not '" +
           key_value + "'";
  const std::string key = key_value.substr(0, eq), value = key_value.substr(eq + 1);
  // Fields not offered as options: those --target fixes, and "weights", which tlmc decides.
  const auto fixed = [](const std::string& k) {
    return k == "isa" || k == "vec" || k == "sm" || k == "cpu" || k == "warp" || k == "weights";
  };
  if (key == "isa" || key == "vec" || key == "sm" || key == "cpu")
    return "--target-option " + key + "=...: the " + key + " follows --target (" + target_names() +
           ")";
  if (key == "warp") return "--target-option warp=...: warp is 32 on every NVIDIA GPU";
  std::istringstream in(target.descriptor());
  std::vector<std::string> words;
  std::string keys;
  bool found = false;
  for (std::string w; in >> w;) {
    const size_t weq = w.find('=');
    if (weq != std::string::npos) {
      const std::string k = w.substr(0, weq);
      if (!fixed(k)) keys += (keys.empty() ? "" : ", ") + k;
      if (k == key) {
        found = true;
        w = key_value;
      }
    }
    words.push_back(w);
  }
  if (!found)
    return "--target-option: " + target.name + " has no field '" + key + "' (it has: " + keys + ")";
  std::string text;
  for (const std::string& w : words) text += (text.empty() ? "" : " ") + w;
  std::optional<Target> changed = parse_fields(text);
  if (!changed) {
    std::string current;
    for (std::istringstream again(target.descriptor()); again >> current;)
      if (current.rfind(key + "=", 0) == 0) break;
    return "--target-option " + key_value + ": '" + value + "' is not a valid " + key +
           " (written as the descriptor writes it: " + current + ")";
  }
  if (changed->is_cuda())
    if (const std::string error = gpu_limits_error(changed->gpu); !error.empty())
      return "--target-option " + key_value + ": " + error;
  changed->name = target.name;
  changed->runs_here = target.runs_here;
  target = *changed;
  return "";
}

std::string target_names() {
  return "host, x86-64, x86-64-avx2, x86-64-avx512, x86-64-avx512-bf16, x86-64-amx, cuda-sm80, "
         "cuda-sm90, cuda";
}

}  // namespace tlmc::ir
