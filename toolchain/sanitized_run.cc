#include "toolchain/sanitized_run.h"

#include <filesystem>
#include <fstream>

#include "toolchain/cc.h"

namespace tlmc::toolchain {
namespace {

namespace fs = std::filesystem;

// The program: main(inputs file, outputs file, count of inputs, their bytes..., count of
// outputs, their bytes...). Exit 0 after writing the outputs; 2-5 for its own failures.
std::string harness(const std::string& header, const std::string& name) {
  return "#define _POSIX_C_SOURCE 200112L\n#include <stdio.h>\n#include <stdlib.h>\n"
         "#include <string.h>\n#include \"" +
         header +
         "\"\n\n"
         "static void* exactly(size_t n) {\n"
         "  void* p = NULL;\n"
         "  if (posix_memalign(&p, 64, n ? n : 1) != 0) exit(3);\n"
         "  return p;\n"
         "}\n\n"
         "int main(int argc, char** argv) {\n"
         "  if (argc < 4) return 2;\n"
         "  FILE* in = fopen(argv[1], \"rb\");\n"
         "  if (!in) return 4;\n"
         "  int a = 3;\n"
         "  const int ni = atoi(argv[a++]);\n"
         "  void** inputs = calloc((size_t)ni + 1, sizeof(void*));\n"
         "  for (int i = 0; i < ni; ++i) {\n"
         "    const size_t n = strtoull(argv[a++], NULL, 10);\n"
         "    inputs[i] = exactly(n);\n"
         "    if (fread(inputs[i], 1, n, in) != n) return 4;\n"
         "  }\n"
         "  fclose(in);\n"
         "  const int no = atoi(argv[a++]);\n"
         "  void** outputs = calloc((size_t)no + 1, sizeof(void*));\n"
         "  size_t* sizes = calloc((size_t)no + 1, sizeof(size_t));\n"
         "  for (int o = 0; o < no; ++o) {\n"
         "    sizes[o] = strtoull(argv[a++], NULL, 10);\n"
         "    outputs[o] = exactly(sizes[o]);\n"
         "    memset(outputs[o], 0xff, sizes[o]);\n"
         "  }\n"
         "  void* workspace = exactly(" +
         name + "_workspace_size());\n" + "  const int rc = " + name +
         "_run((const void* const*)inputs, outputs, workspace);\n"
         "  if (rc != 0) { fprintf(stderr, \"" +
         name +
         "_run returned %d\\n\", rc); return 5; }\n"
         "  FILE* out = fopen(argv[2], \"wb\");\n"
         "  if (!out) return 4;\n"
         "  for (int o = 0; o < no; ++o)\n"
         "    if (fwrite(outputs[o], 1, sizes[o], out) != sizes[o]) return 4;\n"
         "  fclose(out);\n"
         "  for (int i = 0; i < ni; ++i) free(inputs[i]);\n"
         "  for (int o = 0; o < no; ++o) free(outputs[o]);\n"
         "  free(workspace);\n  free(inputs);\n  free(outputs);\n  free(sizes);\n"
         "  return 0;\n}\n";
}

// The last `lines` lines of `text` (a sanitizer's report ends with its summary).
std::string tail(const std::string& text, int lines) {
  size_t at = text.size();
  for (int i = 0; i <= lines && at != std::string::npos && at > 0; ++i)
    at = text.rfind('\n', at - 1);
  return at == std::string::npos ? text : text.substr(at + 1);
}

}  // namespace

SanitizedRun run_sanitized(const std::string& dir, const std::vector<std::string>& sources,
                           const std::string& header, const std::string& name,
                           const ir::Target& target,
                           const std::vector<std::vector<uint8_t>>& inputs,
                           const std::vector<size_t>& output_bytes, int timeout_seconds) {
  SanitizedRun result;
  const fs::path folder(dir);
  std::ofstream(folder / "sanitized_main.c") << harness(header, name);
  std::string files;
  for (const std::string& s : sources) files += " " + shell_quote(s);
  // The target's flags with the sanitizers, -g for the reports' lines, and -O0: every access
  // the C makes is checked (none is optimised away), and the unrolled C of a large schedule
  // compiles in seconds, not minutes (a 490 KB kernel file: 9 s by gcc at -O0, 83 s at -O1).
  const std::string build = "cd " + shell_quote(dir) + " && " + c_compiler() + " -std=c11 -O0 " +
                            target.cc_flags() +
                            " -fno-math-errno -ffp-contract=fast -g -fno-omit-frame-pointer"
                            " -fsanitize=address,undefined -fno-sanitize-recover=all" +
                            files + " sanitized_main.c -o sanitized -lm -lpthread";
  std::string log;
  if (run_shell(build, &log) != 0) {
    result.message = "cannot be built with -fsanitize=address,undefined by " + c_compiler() + " (" +
                     build + "):\n" + log;
    return result;
  }
  {
    std::ofstream in(folder / "inputs.bin", std::ios::binary);
    for (const std::vector<uint8_t>& i : inputs)
      in.write(reinterpret_cast<const char*>(i.data()), static_cast<std::streamsize>(i.size()));
  }
  std::string args = " inputs.bin outputs.bin " + std::to_string(inputs.size());
  for (const std::vector<uint8_t>& i : inputs) args += " " + std::to_string(i.size());
  args += " " + std::to_string(output_bytes.size());
  for (size_t b : output_bytes) args += " " + std::to_string(b);
  const std::string run = "cd " + shell_quote(dir) +
                          " && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 "
                          "UBSAN_OPTIONS=print_stacktrace=1 timeout -s KILL " +
                          std::to_string(timeout_seconds) + " ./sanitized" + args;
  const int rc = run_shell(run, &log);
  if (rc != 0) {
    result.message =
        (rc == 137 ? "was still running after " + std::to_string(timeout_seconds) + " s"
                   : "stopped (exit status " + std::to_string(rc) + ")") +
        " under -fsanitize=address,undefined:\n" + tail(log, 40);
    return result;
  }
  std::ifstream out(folder / "outputs.bin", std::ios::binary);
  for (size_t b : output_bytes) {
    std::vector<uint8_t> bytes(b);
    out.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(b));
    if (static_cast<size_t>(out.gcount()) != b) {
      result.message = "wrote fewer output bytes than its outputs hold";
      return result;
    }
    result.outputs.push_back(std::move(bytes));
  }
  result.ok = true;
  return result;
}

}  // namespace tlmc::toolchain
