// The CUDA emulator's header is precompiled once into the object cache's folder and included
// by every later library built for the emulator (toolchain/cuda_toolkit.cc): made by the
// first check, used unchanged by the next, and a damaged one, cut short or not a
// precompiled header at all, is set aside and the library built without it, then made
// again. With the cache off nothing is kept and the library is built as before. A model of
// little work is compiled at -Og, one of much at -O1. The C++ compiler is a script that
// logs each command and runs c++, so that the test sees what was compiled and with what.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_support.h"

namespace tlmc::test {
namespace {

namespace fs = std::filesystem;

const char* kModel = R"(tlmc: 1
name: tiny
inputs:
  x: {shape: [3, 8]}
weights:
  w: {shape: [8, 5], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: Relu, inputs: [h], outputs: [y]}
outputs: [y]
)";

class PrecompiledEmulator : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(dir.file("tiny.yaml"), kModel);
    write_file(dir.file("logged-c++"), "#!/bin/sh\nprintf '%s\\n' \"$*\" >> " +
                                           dir.file("commands.log") + "\nexec c++ \"$@\"\n");
    fs::permissions(dir.file("logged-c++"), fs::perms::owner_all);
  }

  // `tlmc --check` of the model for the emulated A100, with the logging compiler and the
  // cache `cache` ("off", or a folder); the commands it compiled with.
  std::vector<std::string> check(const std::string& cache) {
    fs::remove(dir.file("commands.log"));
    const CommandResult r =
        run_command("TLMC_OBJECT_CACHE=" + cache + " CXX=" + dir.file("logged-c++") + " " +
                    TLMC_EXE + " --check -O0 --target cuda-sm80 " + dir.file("tiny.yaml"));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
    std::vector<std::string> lines;
    std::istringstream log(read_file(dir.file("commands.log")));
    for (std::string line; std::getline(log, line);) lines.push_back(line);
    return lines;
  }

  // The one precompiled header of the cache (empty when there is none).
  std::string precompiled() const {
    const fs::path folder = fs::path(dir.file("cache")) / "emulator";
    std::vector<std::string> found;
    if (fs::exists(folder))
      for (const fs::directory_entry& e : fs::directory_iterator(folder))
        if (fs::exists(e.path() / "cuda_runtime.h.gch"))
          found.push_back((e.path() / "cuda_runtime.h.gch").string());
    EXPECT_LE(found.size(), 1u);
    return found.empty() ? "" : found[0];
  }

  TempDir dir;
};

int count(const std::vector<std::string>& commands, const std::string& part) {
  int n = 0;
  for (const std::string& c : commands) n += c.find(part) != std::string::npos;
  return n;
}

// The commands that compile the library's C++ (not the header, not the weights' assembly,
// not the link).
std::vector<std::string> unit_compiles(const std::vector<std::string>& commands) {
  std::vector<std::string> out;
  for (const std::string& c : commands)
    if (c.find("-x c++ ") != std::string::npos) out.push_back(c);
  return out;
}

ino_t inode(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_ino;
}

TEST_F(PrecompiledEmulator, MadeOnceThenIncludedByEveryBuild) {
  const std::string cache = dir.file("cache");
  std::vector<std::string> first = check(cache);
  EXPECT_EQ(count(first, "-x c++-header"), 1) << "the first build precompiles the header";
  const std::string made = precompiled();
  ASSERT_FALSE(made.empty());
  // Checked in both orders of blocks and threads, from one library: one unit compiled.
  ASSERT_EQ(unit_compiles(first).size(), 1u);
  const std::string include =
      "-include " + (fs::path(made).parent_path() / "cuda_runtime.h").string();
  EXPECT_NE(unit_compiles(first)[0].find(include), std::string::npos) << unit_compiles(first)[0];

  const ino_t before = inode(made);
  std::vector<std::string> second = check(cache);
  EXPECT_EQ(count(second, "-x c++-header"), 0) << "the next build finds it";
  ASSERT_EQ(unit_compiles(second).size(), 1u);
  EXPECT_NE(unit_compiles(second)[0].find(include), std::string::npos);
  EXPECT_EQ(precompiled(), made);
  EXPECT_EQ(inode(made), before) << "kept, not made again";
}

TEST_F(PrecompiledEmulator, ADamagedOneIsSetAsideAndMadeAgain) {
  const std::string cache = dir.file("cache");
  check(cache);
  const std::string made = precompiled();
  ASSERT_FALSE(made.empty());
  const uintmax_t whole = fs::file_size(made);
  const std::string bytes = read_file(made);
  for (const std::string& damaged : {bytes.substr(0, bytes.size() / 3), std::string("garbage\n")}) {
    SCOPED_TRACE(damaged.size() < 100 ? "not a precompiled header" : "cut short");
    write_file(made, damaged);
    const std::vector<std::string> commands = check(cache);
    ASSERT_EQ(unit_compiles(commands).size(), 2u) << "with it, then without";
    EXPECT_NE(unit_compiles(commands)[0].find("-include "), std::string::npos);
    EXPECT_EQ(unit_compiles(commands)[1].find("-include "), std::string::npos);
    EXPECT_EQ(precompiled(), "") << "the damaged one is removed";
    EXPECT_EQ(count(check(cache), "-x c++-header"), 1) << "and the next build makes it again";
    ASSERT_EQ(precompiled(), made);
    // Whole again (not byte for byte: it names the folder it was made in).
    EXPECT_GT(fs::file_size(made), whole * 9 / 10);
  }
}

// A model of little work is compiled at -Og, one whose kernels' work makes up for -O1's
// longer compile at -O1 (driver/output_files.cc): 2 x 256 x 512 x 256 operations here.
TEST_F(PrecompiledEmulator, TheModelsWorkChoosesTheOptimisation) {
  const std::vector<std::string> tiny = unit_compiles(check("off"));
  ASSERT_EQ(tiny.size(), 1u);
  EXPECT_NE(tiny[0].find(" -Og "), std::string::npos) << tiny[0];
  write_file(dir.file("tiny.yaml"), R"(tlmc: 1
name: wide
inputs:
  x: {shape: [256, 512]}
weights:
  w: {shape: [512, 256], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [y]}
outputs: [y]
)");
  const std::vector<std::string> wide = unit_compiles(check("off"));
  ASSERT_EQ(wide.size(), 1u);
  EXPECT_NE(wide[0].find(" -O1 "), std::string::npos) << wide[0];
}

TEST_F(PrecompiledEmulator, WithTheCacheOffNothingIsKept) {
  const std::vector<std::string> commands = check("off");
  EXPECT_EQ(count(commands, "-x c++-header"), 0);
  ASSERT_EQ(unit_compiles(commands).size(), 1u);
  EXPECT_EQ(unit_compiles(commands)[0].find("-include "), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.file("cache")));
}

}  // namespace
}  // namespace tlmc::test
