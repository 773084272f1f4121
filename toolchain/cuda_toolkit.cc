#include "toolchain/cuda_toolkit.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "ir/diagnostic.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"
#include "toolchain/cc.h"
#include "toolchain/object_cache.h"

namespace tlmc::toolchain {
namespace {

namespace fs = std::filesystem;

bool executable(const fs::path& p) {
  return access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p);
}

// The C++ compiler ($CXX, else c++).
std::string cxx_compiler() {
  const char* cxx = std::getenv("CXX");
  return cxx && *cxx ? cxx : "c++";
}

// How the emulated sources are compiled, and their precompiled header with them.
std::string emulated_flags(EmulatedCode code) {
  return std::string("-std=c++17 ") + (code == EmulatedCode::Fast ? "-O1" : "-Og") + " -fPIC";
}

// At most this many precompiled emulator headers (some 45 MB each) are kept: one per
// version of tlmc's emulator and C++ compiler in use.
constexpr int kKeptPrecompiledHeaders = 4;

// Removes the precompiled headers of `folder` past the kKeptPrecompiledHeaders most recently
// used, and the leftovers of builds that died (older than an hour).
void trim_precompiled_headers(const fs::path& folder) {
  std::vector<std::pair<fs::file_time_type, fs::path>> kept;
  const fs::file_time_type stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code time;
    const fs::file_time_type used = it->last_write_time(time);
    if (time) continue;
    if (it->path().filename().string().rfind(".tmp-", 0) == 0) {
      if (used < stale) fs::remove_all(it->path(), time);
      continue;
    }
    kept.emplace_back(used, it->path());
  }
  std::sort(kept.begin(), kept.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = kKeptPrecompiledHeaders; i < kept.size(); ++i) fs::remove_all(kept[i].second, ec);
}

// The emulator's header precompiled by the C++ compiler: the header and the standard headers
// it includes are about a third of what a small model's library costs to compile for the
// emulator, and a check compiles one per schedule it runs. Kept in the object cache's folder
// (one only this user can write: see object_cache.h), under emulator/DIGEST/, the digest of
// the header's text, the compiler's command and the flags (the compiler itself refuses one
// that another version of it made: build_emulated_library then removes it). Made once, in
// a folder of its own renamed into place, so that builds running at once see all of it or
// none. Returns the header to -include (its .gch beside
// it), or nullopt without a cache or where the compiler cannot precompile it: the build
// goes on without one.
std::optional<fs::path> precompiled_emulator(const std::string& emulator,
                                             const std::string& flags) {
  const std::optional<ObjectCache> cache = object_cache_from_environment();
  if (!cache) return std::nullopt;
  const std::string identity = emulator + '\0' + cxx_compiler() + '\0' + flags;
  const std::string digest =
      llvm::toHex(llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
                      reinterpret_cast<const uint8_t*>(identity.data()), identity.size())),
                  /*LowerCase=*/true);
  const fs::path folder = fs::path(cache->folder) / "emulator";
  const fs::path entry = folder / digest.substr(0, 32);
  const fs::path header = entry / "cuda_runtime.h";
  std::error_code ec;
  if (fs::is_regular_file(fs::path(header.string() + ".gch"), ec)) {
    fs::last_write_time(entry, fs::file_time_type::clock::now(), ec);  // recently used
    return header;
  }
  if (fs::create_directories(cache->folder, ec))
    fs::permissions(cache->folder, fs::perms::owner_all, ec);
  fs::create_directories(folder, ec);
  static std::atomic<int> serial{0};
  const fs::path building =
      folder / (".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
  if (!fs::create_directory(building, ec)) return std::nullopt;
  bool written = false;
  {
    std::ofstream f(building / "cuda_runtime.h");
    f << emulator;
    written = static_cast<bool>(f.flush());
  }
  std::string log;
  if (!written || run_shell("cd " + shell_quote(building.string()) + " && " + cxx_compiler() +
                                " -x c++-header " + flags + " cuda_runtime.h -o cuda_runtime.h.gch",
                            &log) != 0) {
    fs::remove_all(building, ec);
    return std::nullopt;
  }
  fs::rename(building, entry, ec);
  if (ec) {  // another build stored it first
    fs::remove_all(building, ec);
    if (!fs::is_regular_file(fs::path(header.string() + ".gch"), ec)) return std::nullopt;
  }
  trim_precompiled_headers(folder);
  return header;
}

}  // namespace

std::string find_nvcc() {
  for (const char* env : {"CUDA_PATH", "CUDA_HOME"})
    if (const char* root = std::getenv(env); root && *root)
      if (executable(fs::path(root) / "bin" / "nvcc")) return (fs::path(root) / "bin" / "nvcc");
  if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string d; std::getline(dirs, d, ':');)
      if (!d.empty() && executable(fs::path(d) / "nvcc")) return fs::path(d) / "nvcc";
  }
  if (executable("/usr/local/cuda/bin/nvcc")) return "/usr/local/cuda/bin/nvcc";
  return "";
}

std::string compile_cuda_object(const std::string& dir, const std::string& cu,
                                const ir::Target& target, bool pic) {
  const std::string nvcc = find_nvcc();
  if (nvcc.empty())
    throw Diagnostic({}, "compiling for " + target.name +
                             " needs nvcc, which is neither in $CUDA_PATH, $CUDA_HOME, PATH nor "
                             "/usr/local/cuda/bin: install the CUDA toolkit, or ask for "
                             "--emit source and compile the .cu yourself");
  const std::string sm = std::to_string(target.gpu.sm);
  std::string obj = cu.substr(0, cu.rfind('.')) + ".o";
  run_or_fail("compiling the generated " + cu,
              "cd " + shell_quote(dir) + " && " + shell_quote(nvcc) +
                  " -std=c++17 -O3 -Werror all-warnings -gencode arch=compute_" + sm + ",code=sm_" +
                  sm + " -gencode arch=compute_" + sm + ",code=compute_" + sm +
                  (pic ? " -Xcompiler -fPIC" : "") + " -c " + shell_quote(cu) + " -o " +
                  shell_quote(obj));
  return obj;
}

void link_cuda_shared_library(const std::string& dir, const std::vector<std::string>& objects,
                              const std::string& out) {
  const std::string nvcc = find_nvcc();
  TLMC_ASSERT(!nvcc.empty(), "linking " << out << " without nvcc, which compiled its objects");
  std::string list;
  for (const std::string& o : objects) list += " " + shell_quote(o);
  run_or_fail("linking the generated CUDA library",
              "cd " + shell_quote(dir) + " && " + shell_quote(nvcc) +
                  " -shared -cudart static -o " + shell_quote(out) + list);
}

void build_emulated_library(const std::string& dir, const std::vector<std::string>& sources,
                            const std::string& out, const std::string& emulator,
                            EmulatedCode code) {
  const fs::path prelude = fs::path(dir) / "emulation";
  fs::create_directories(prelude);
  {
    std::ofstream f(prelude / "cuda_runtime.h");
    f << emulator;
  }
  // The C++ sources are compiled as one translation unit: the emulator and the standard
  // headers it includes are most of what one source costs to compile (about 0.4 s of a
  // model's 1.5 s with g++ at -O1), and a check builds one library per schedule it runs.
  // Each generated source guards its headers, and their names are the model's own.
  std::string unit, objects;
  for (const std::string& src : sources) {
    if (src.size() > 2 && src.compare(src.size() - 2, 2, ".S") == 0) {
      const std::string obj = src.substr(0, src.size() - 2) + ".o";
      run_or_fail("assembling the generated " + src + " for the CUDA emulator",
                  "cd " + shell_quote(dir) + " && " + cxx_compiler() + " -fPIC -c " +
                      shell_quote(src) + " -o " + shell_quote(obj));
      objects += " " + shell_quote(obj);
    } else {
      TLMC_ASSERT(src.find_first_of("\"\n") == std::string::npos,
                  "the emulated source " << src << " has a name #include cannot spell");
      unit += "#include \"" + src + "\"\n";
    }
  }
  if (!unit.empty()) {
    const std::string name = out.substr(0, out.rfind('.')) + "_emulated";
    std::ofstream(fs::path(dir) / (name + ".cc")) << unit;
    const std::string what = "compiling the generated sources for the CUDA emulator";
    const std::string flags = emulated_flags(code);
    const std::string compile = "cd " + shell_quote(dir) + " && " + cxx_compiler() + " -x c++ " +
                                flags + " -I emulation -I . -c " + shell_quote(name + ".cc") +
                                " -o " + shell_quote(name + ".o");
    // The precompiled header is included first; the sources' own #include <cuda_runtime.h>
    // then finds its guard defined. A compile that fails with it (a damaged file, or one the
    // compiler will not use: -Werror=invalid-pch) is run again without it, and that one
    // removed, to be made again by the next build.
    const std::optional<fs::path> header = precompiled_emulator(emulator, flags);
    std::string log;
    if (!header ||
        run_shell(compile + " -Werror=invalid-pch -include " + shell_quote(header->string()),
                  &log) != 0) {
      if (header) {
        std::error_code ec;
        fs::remove_all(header->parent_path(), ec);
      }
      run_or_fail(what, compile);
    }
    objects += " " + shell_quote(name + ".o");
  }
  run_or_fail("linking the emulated library", "cd " + shell_quote(dir) + " && " + cxx_compiler() +
                                                  " -shared -o " + shell_quote(out) + objects);
}

}  // namespace tlmc::toolchain
