#include "toolchain/nvrtc.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <regex>
#include <sstream>

#include "ir/diagnostic.h"
#include "toolchain/cuda_toolkit.h"

namespace tlmc::toolchain {
namespace {

namespace fs = std::filesystem;

// The NVRTC entry points tlmc calls, declared here: the toolkit's header is not needed to
// build tlmc. nvrtcResult is an int, 0 for success; nvrtcProgram an opaque pointer.
struct Nvrtc {
  using Program = void*;
  const char* (*error_string)(int) = nullptr;
  int (*version)(int*, int*) = nullptr;
  int (*create)(Program*, const char*, const char*, int, const char* const*,
                const char* const*) = nullptr;
  int (*destroy)(Program*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*log_size)(Program, size_t*) = nullptr;
  int (*log)(Program, char*) = nullptr;
  int (*cubin_size)(Program, size_t*) = nullptr;
  int (*cubin)(Program, char*) = nullptr;
  std::string path;
};

std::vector<std::string> library_candidates() {
  std::vector<fs::path> dirs;
  for (const char* env : {"CUDA_PATH", "CUDA_HOME"})
    if (const char* root = std::getenv(env); root && *root)
      dirs.push_back(fs::path(root) / "lib64");
  if (const std::string nvcc = find_nvcc(); !nvcc.empty())
    dirs.push_back(fs::path(nvcc).parent_path().parent_path() / "lib64");
  dirs.emplace_back("/usr/local/cuda/lib64");
  std::vector<std::string> out;
  const char* names[] = {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"};
  for (const fs::path& d : dirs)
    for (const char* n : names)
      if (std::error_code ec; fs::exists(d / n, ec)) out.push_back(d / n);
  for (const char* n : names) out.emplace_back(n);  // the loader's own search
  return out;
}

template <typename F>
bool bind(void* lib, const char* symbol, F*& f) {
  f = reinterpret_cast<F*>(dlsym(lib, symbol));
  return f != nullptr;
}

// Loaded once per process; nullptr (and the reason) when no candidate loads.
const Nvrtc* load_nvrtc(std::string* why) {
  static std::once_flag once;
  static Nvrtc nvrtc;
  static bool loaded = false;
  static std::string reason;
  std::call_once(once, [] {
    for (const std::string& path : library_candidates()) {
      void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib) continue;
      Nvrtc n;
      n.path = path;
      if (bind(lib, "nvrtcGetErrorString", n.error_string) &&
          bind(lib, "nvrtcVersion", n.version) && bind(lib, "nvrtcCreateProgram", n.create) &&
          bind(lib, "nvrtcDestroyProgram", n.destroy) &&
          bind(lib, "nvrtcCompileProgram", n.compile) &&
          bind(lib, "nvrtcGetProgramLogSize", n.log_size) &&
          bind(lib, "nvrtcGetProgramLog", n.log) && bind(lib, "nvrtcGetCUBINSize", n.cubin_size) &&
          bind(lib, "nvrtcGetCUBIN", n.cubin)) {
        nvrtc = n;
        loaded = true;
        return;
      }
      dlclose(lib);
    }
    reason =
        "NVRTC (libnvrtc.so of the CUDA toolkit) is neither in $CUDA_PATH/lib64, "
        "$CUDA_HOME/lib64, beside nvcc, /usr/local/cuda/lib64 nor the loader's path";
  });
  if (!loaded && why) *why = reason;
  return loaded ? &nvrtc : nullptr;
}

// The log's length in a compile's reply: this many decimal digits.
constexpr size_t kLogLengthDigits = 20;

// One NVRTC compile: "0" or "1" (refused), the log's length (kLogLengthDigits digits), the
// log, then the cubin (none when refused).
std::string compile_program(const Nvrtc& nvrtc, const std::string& source,
                            const std::string& file_name,
                            const std::vector<std::pair<std::string, std::string>>& headers,
                            int sm) {
  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : headers) {
    header_names.push_back(name.c_str());
    header_texts.push_back(text.c_str());
  }
  // NVRTC 12.9 and later keep compiled programs in a cache where a CUDA driver is installed,
  // and a compile found there skips ptxas, and with it the -v report this compile is for (on
  // an H200 with driver 580 and NVRTC 13.0, every compile of a text seen before came back
  // without one). This child compiles with the cache off; the compiler's own environment,
  // and the libraries it runs, keep theirs.
  setenv("CUDA_CACHE_DISABLE", "1", 1);
  Nvrtc::Program program = nullptr;
  int r = nvrtc.create(&program, source.c_str(), file_name.c_str(),
                       static_cast<int>(headers.size()), header_texts.data(), header_names.data());
  auto reply = [](bool ok, const std::string& log, const std::string& cubin) {
    char length[kLogLengthDigits + 1];
    std::snprintf(length, sizeof length, "%020zu", log.size());
    return (ok ? "0" : "1") + std::string(length) + log + cubin;
  };
  if (r != 0) return reply(false, std::string("nvrtcCreateProgram: ") + nvrtc.error_string(r), "");
  const std::string arch = "-arch=sm_" + std::to_string(sm);
  const char* options[] = {arch.c_str(), "-std=c++17", "-Xptxas=-v"};
  r = nvrtc.compile(program, 3, options);
  size_t size = 0;
  nvrtc.log_size(program, &size);
  std::string log(size, '\0');
  if (size > 0) nvrtc.log(program, log.data());
  log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
  std::string cubin;
  if (r == 0 && nvrtc.cubin_size(program, &size) == 0) {
    cubin.resize(size);
    if (size > 0 && nvrtc.cubin(program, cubin.data()) != 0) cubin.clear();
  }
  nvrtc.destroy(&program);
  return reply(r == 0, log, cubin);
}

// NVRTC 13.0 crashes (SIGSEGV inside nvrtcCompileProgram, also with PTX as its only output)
// on some texts, depending on where its allocations land: one generated convolution kernel
// of 2 threads crashed it in 5 fresh processes of 12 and compiled in the others, always in
// a process whose heap layout was fixed (no address randomisation), and compiled again once
// 100 bytes were allocated before; nvcc compiled it every time, and any smaller variant of
// the kernel too. So each compile runs in a forked child (a crash costs a fork, never the
// compiler), and a crashed one is tried again in a new child with its memory shifted, up to
// this many times in all; then the kernels go unchecked, with a note.
constexpr int kCrashAttempts = 10;

// Moves where a child's later allocations land, differently for each attempt: a block of
// the heap and a reserved stretch of the address space, of sizes drawn from the attempt.
void shift_memory_layout(int attempt) {
  std::mt19937_64 rng(static_cast<uint64_t>(getpid()) * 7919 + static_cast<uint64_t>(attempt));
  volatile char* heap = static_cast<char*>(std::malloc(16 + rng() % 98304));
  if (heap) heap[0] = 0;
  const void* reserved =
      mmap(nullptr, (1 + rng() % 4096) * 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  (void)reserved;  // kept until the child exits
}

// Runs `work` in a forked child and returns what it returned; nullopt, with the wait status
// in `status`, when the child died.
template <typename Work>
std::optional<std::string> in_child(const Work& work, int* status) {
  int fds[2];
  TLMC_ASSERT(pipe(fds) == 0, "pipe: " << std::strerror(errno));
  const pid_t pid = fork();
  TLMC_ASSERT(pid >= 0, "fork: " << std::strerror(errno));
  if (pid == 0) {
    close(fds[0]);
    const std::string reply = work();
    for (size_t done = 0; done < reply.size();) {
      const ssize_t n = write(fds[1], reply.data() + done, reply.size() - done);
      if (n <= 0) _exit(2);
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string reply;
  char buffer[65536];
  for (ssize_t n; (n = read(fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    reply.append(buffer, static_cast<size_t>(n));
  }
  close(fds[0]);
  while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(*status) || WEXITSTATUS(*status) != 0 || reply.empty()) return std::nullopt;
  return reply;
}

// Writes the text NVRTC failed on, and its headers, to a new folder of $TMPDIR (else /tmp)
// for a bug report; its path, or why there is none.
std::string keep_source(const std::string& source,
                        const std::vector<std::pair<std::string, std::string>>& headers) {
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/tlmc-nvrtc-XXXXXX";
  if (!mkdtemp(dir.data())) return "not kept: " + std::string(std::strerror(errno));
  const std::filesystem::path folder(dir);
  std::ofstream(folder / "source.cu") << source;
  for (const auto& [name, text] : headers) std::ofstream(folder / name) << text;
  return (folder / "source.cu").string();
}

std::string status_text(int status) {
  if (WIFSIGNALED(status)) return std::string("signal ") + strsignal(WTERMSIG(status));
  return "exit status " + std::to_string(WEXITSTATUS(status));
}

int number(const std::string& s) { return static_cast<int>(std::strtol(s.c_str(), nullptr, 10)); }

}  // namespace

std::vector<ir::KernelResources> parse_ptxas_report(const std::string& log) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex barriers(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  static const std::regex cmem(R"((\d+) bytes cmem\[0\])");
  std::vector<ir::KernelResources> out;
  std::string described;  // the function whose properties the next frame line gives
  std::istringstream lines(log);
  std::smatch m;
  const auto find = [&](const std::string& name) -> ir::KernelResources* {
    for (ir::KernelResources& k : out)
      if (k.name == name) return &k;
    return nullptr;
  };
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_search(line, m, entry)) {
      if (!find(m[1])) out.push_back(ir::KernelResources{m[1]});
    } else if (std::regex_search(line, m, properties)) {
      described = m[1];
    } else if (std::regex_search(line, m, frame)) {
      if (ir::KernelResources* k = find(described)) {
        k->stack_bytes = number(m[1]);
        k->spill_stores = number(m[2]);
        k->spill_loads = number(m[3]);
      }
    } else if (std::regex_search(line, m, used) && !out.empty()) {
      ir::KernelResources& k = out.back();  // "Used" follows its entry's "Compiling" line
      k.registers = number(m[1]);
      if (std::regex_search(line, m, barriers)) k.barriers = number(m[1]);
      if (std::regex_search(line, m, smem)) k.shared_bytes = number(m[1]);
      if (std::regex_search(line, m, cmem)) k.constant_bytes = number(m[1]);
    }
  }
  return out;
}

std::optional<std::vector<ir::KernelResources>> launched_kernels(
    const NvrtcOutput& out, const std::vector<KernelLaunch>& launches, std::string* why) {
  std::vector<ir::KernelResources> kernels;
  for (const KernelLaunch& l : launches) {
    const ir::KernelResources* found = nullptr;
    for (const ir::KernelResources& k : out.kernels)
      if (k.name == l.kernel) found = &k;
    if (!found) {
      if (why)
        *why = "ptxas's report through NVRTC " + out.version + " names no kernel " + l.kernel +
               (out.log.empty() ? " (the log is empty: a compile NVRTC took from a cache?)"
                                : " (its log: " + out.log + ")");
      return std::nullopt;
    }
    kernels.push_back(*found);
    kernels.back().threads = static_cast<int>(l.threads);
    kernels.back().dynamic_shared_bytes = static_cast<int>(l.dynamic_shared_bytes);
  }
  return kernels;
}

int nvrtc_major_version() {
  const Nvrtc* nvrtc = load_nvrtc(nullptr);
  int major = 0, minor = 0;
  if (nvrtc) nvrtc->version(&major, &minor);
  return major;
}

std::optional<NvrtcOutput> nvrtc_compile(
    const std::string& source, const std::string& file_name,
    const std::vector<std::pair<std::string, std::string>>& headers, const ir::GpuLimits& gpu,
    std::string* why) {
  const Nvrtc* nvrtc = load_nvrtc(why);
  if (!nvrtc) return std::nullopt;
  NvrtcOutput out;
  int major = 0, minor = 0;
  nvrtc->version(&major, &minor);
  out.version = std::to_string(major) + "." + std::to_string(minor);
  const std::string what = "NVRTC " + out.version + " (" + nvrtc->path + ")";
  const std::string target = " the generated " + file_name + " for sm_" + std::to_string(gpu.sm);
  int status = 0;
  std::optional<std::string> reply;
  for (int attempt = 0; attempt < kCrashAttempts && !reply; ++attempt)
    reply = in_child(
        [&] {
          if (attempt > 0) shift_memory_layout(attempt);
          return compile_program(*nvrtc, source, file_name, headers, gpu.sm);
        },
        &status);
  if (!reply) {
    // The text is not at fault (nvcc builds it): its resources go unchecked, said so.
    if (why)
      *why = what + " crashed (" + status_text(status) + ") compiling" + target + " " +
             std::to_string(kCrashAttempts) + " times (its text: " + keep_source(source, headers) +
             ")";
    return std::nullopt;
  }
  TLMC_ASSERT(reply->size() >= 1 + kLogLengthDigits, "a truncated reply from NVRTC's child");
  const bool refused = (*reply)[0] != '0';
  const size_t log_size = std::strtoull(reply->substr(1, kLogLengthDigits).c_str(), nullptr, 10);
  TLMC_ASSERT(reply->size() >= 1 + kLogLengthDigits + log_size,
              "a truncated reply from NVRTC's child");
  const std::string log = reply->substr(1 + kLogLengthDigits, log_size);
  const bool warned = log.find("warning") != std::string::npos;
  if (refused || warned)
    throw InternalError(what + " " + (refused ? "refused" : "warned about") + target + ":\n" + log);
  out.log = log;
  out.cubin = reply->substr(1 + kLogLengthDigits + log_size);
  out.kernels = parse_ptxas_report(log);
  return out;
}

}  // namespace tlmc::toolchain
