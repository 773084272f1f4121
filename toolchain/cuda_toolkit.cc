#include "toolchain/cuda_toolkit.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/diagnostic.h"
#include "toolchain/cc.h"

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
                            const std::string& out, const std::string& emulator) {
  const fs::path prelude = fs::path(dir) / "emulation";
  fs::create_directories(prelude);
  {
    std::ofstream f(prelude / "cuda_runtime.h");
    f << emulator;
  }
  std::string objects;
  for (const std::string& src : sources) {
    const std::string obj = src.substr(0, src.rfind('.')) + ".o";
    const bool assembler = src.size() > 2 && src.compare(src.size() - 2, 2, ".S") == 0;
    run_or_fail("compiling the generated " + src + " for the CUDA emulator",
                "cd " + shell_quote(dir) + " && " + cxx_compiler() +
                    (assembler ? "" : " -x c++ -std=c++17 -O1 -I emulation -I .") + " -fPIC -c " +
                    shell_quote(src) + " -o " + shell_quote(obj));
    objects += " " + shell_quote(obj);
  }
  run_or_fail("linking the emulated library", "cd " + shell_quote(dir) + " && " + cxx_compiler() +
                                                  " -shared -o " + shell_quote(out) + objects);
}

}  // namespace tlmc::toolchain
