#include "support/test_support.h"

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tlmc::test {
namespace {

// The tests, and the tlmc commands they run, share an object cache of their own in the build
// folder (toolchain/object_cache.h) unless the environment names one ("off": none): C that
// one test compiled is not compiled again by the next, and the developer's cache is left
// alone. Set before main, so before any compilation.
const bool kObjectCacheChosen =
    setenv("TLMC_OBJECT_CACHE", TLMC_BINARY_DIR "/object-cache", /*overwrite=*/0) == 0;

}  // namespace

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
  int fds[2];
  if (pipe(fds) != 0) return r;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::string line = command_line;
  char* argv[] = {const_cast<char*>("sh"), const_cast<char*>("-c"), line.data(), nullptr};
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, "/bin/sh", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    return r;
  }
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) != 0) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    r.out.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  struct rusage usage {};
  while (wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.peak_resident_kib = usage.ru_maxrss;
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
