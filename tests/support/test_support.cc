#include "support/test_support.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tlmc::test {

TempDir::TempDir() {
  std::string templ = (std::filesystem::temp_directory_path() / "tlmc-test-XXXXXX").string();
  if (!mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

CommandResult run_command(const std::string& command_line) {
  CommandResult r;
  FILE* p = popen((command_line + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
}

int count_entries(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return 0;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator(dir, ec);
       it != std::filesystem::directory_iterator(); ++it)
    ++n;
  return n;
}

std::string product_softmax_yaml(int m, int k, int n) {
  const std::string a = std::to_string(m) + ", " + std::to_string(k);
  const std::string w = std::to_string(k) + ", " + std::to_string(n);
  return "tlmc: 1\nname: small\ninputs:\n  a: {shape: [" + a + "]}\nweights:\n  w: {shape: [" + w +
         "], init: {uniform: [-1, 1]}, seed: 2}\nnodes:\n  - {op: MatMul, inputs: [a, w], outputs: "
         "[c]}\n  - {op: Relu, inputs: [c], outputs: [r]}\n  - {op: Softmax, inputs: [r], outputs: "
         "[y]}\noutputs: [y]\n";
}

}  // namespace tlmc::test
