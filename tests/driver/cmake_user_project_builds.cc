// The CMake package as a user sees it (docs/cmake.md): tlmc installed into a prefix,
// a separate project doing find_package(tlmc) + tlmc_add_library(), built with Ninja; the
// program gives the right numbers; a second build does nothing; a touched model or a
// changed weight file regenerates the library.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "ir/target.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

namespace fs = std::filesystem;

// The library is called `mynet` while the model calls itself `tiny_model`: the API and
// header follow the tlmc_add_library name (mynet_run, mynet.h).
const char* kModel = R"(tlmc: 1
name: tiny_model
inputs:
  x: {shape: [1, 4], dtype: float32}
weights:
  w: {shape: [4, 3], file: weights/w.bin}
  b: {shape: [3], data: [0.5, -1, 2]}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: Add, inputs: [h, b], outputs: [y]}
outputs: [y]
)";
const float kX[4] = {1, 2, 3, 4};
const float kB[3] = {0.5f, -1, 2};

const char* kMain = R"(#include <stdio.h>
#include "mynet.h"
int main(void) {
  static _Alignas(64) unsigned char workspace[1 << 16];
  if (mynet_workspace_size() > sizeof workspace) return 10;
  float x[4] = {1, 2, 3, 4}, y[3];
  const void* inputs[] = {x};
  void* outputs[] = {y};
  int rc = mynet_run(inputs, outputs, workspace);
  printf("y %.9g %.9g %.9g\n", y[0], y[1], y[2]);
  return rc;
}
)";

const char* kCMakeLists = R"(cmake_minimum_required(VERSION 3.20)
project(user_of_tlmc C)
find_package(tlmc 0.1 REQUIRED)
tlmc_add_library(mynet MODEL model/tiny.yaml OPT -O0 THREADS 1)
add_executable(app main.c)
target_link_libraries(app PRIVATE mynet)
)";

std::string weight_bytes(const std::vector<float>& w) {
  std::string bytes(w.size() * sizeof(float), '\0');
  std::memcpy(bytes.data(), w.data(), bytes.size());  // little-endian host, as the format says
  return bytes;
}

// y = x . w + b, w row-major [4, 3].
std::vector<float> expected_output(const std::vector<float>& w) {
  std::vector<float> y(3);
  for (int j = 0; j < 3; ++j) {
    float s = 0;
    for (int i = 0; i < 4; ++i) s += kX[i] * w[static_cast<size_t>(i * 3 + j)];
    y[static_cast<size_t>(j)] = s + kB[j];
  }
  return y;
}

std::vector<float> parse_output(const std::string& out) {
  float y[3];
  if (std::sscanf(out.c_str(), "y %f %f %f", &y[0], &y[1], &y[2]) != 3) return {};
  return {y[0], y[1], y[2]};
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// CMake wraps its messages: runs of blanks and newlines become one space.
std::string one_line(const std::string& text) {
  std::string out;
  for (char c : text) {
    const bool blank = c == ' ' || c == '\n' || c == '\t';
    if (!blank)
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  return out;
}

// Every element a multiple of 1/4: the sums are exact in float.
std::vector<float> weights(float scale) {
  std::vector<float> w(12);
  for (size_t k = 0; k < w.size(); ++k) w[k] = scale * (static_cast<float>(k) - 5);
  return w;
}

class CMakeUserProject : public ::testing::Test {
 protected:
  void SetUp() override {
    CommandResult r =
        run_command("cmake --install " + quoted(TLMC_BINARY_DIR) + " --prefix " + quoted(prefix()));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    ASSERT_TRUE(fs::exists(prefix() + "/bin/tlmc")) << r.out;
    ASSERT_TRUE(fs::exists(prefix() + "/lib/cmake/tlmc/tlmcConfig.cmake")) << r.out;
    // A space in the project path checks the quoting of the command and the depfile.
    fs::create_directories(source() + "/model/weights");
    write_file(source() + "/CMakeLists.txt", kCMakeLists);
    write_file(source() + "/main.c", kMain);
    write_file(model(), kModel);
    write_file(weight_file(), weight_bytes(weights(0.25f)));
  }

  std::string prefix() const { return dir.file("prefix"); }
  std::string source() const { return dir.file("user project"); }
  std::string build() const { return dir.file("user project/build"); }
  std::string model() const { return source() + "/model/tiny.yaml"; }
  std::string weight_file() const { return source() + "/model/weights/w.bin"; }
  std::string library() const { return build() + "/tlmc/mynet/libmynet.a"; }

  CommandResult configure(const std::string& cmake_lists) {
    write_file(source() + "/CMakeLists.txt", cmake_lists);
    return run_command("cmake -S " + quoted(source()) + " -B " + quoted(build()) +
                       " -G Ninja -DCMAKE_PREFIX_PATH=" + quoted(prefix()));
  }
  CommandResult build_it() { return run_command("cmake --build " + quoted(build())); }
  CommandResult run_app() { return run_command(quoted(build() + "/app")); }

  // The build reruns tlmc only when an input is newer than the library it made.
  void expect_newer_than_library(const std::string& input) {
    ASSERT_GT(fs::last_write_time(input), fs::last_write_time(library())) << input;
  }

  TempDir dir;
};

TEST_F(CMakeUserProject, BuildsRunsAndRegeneratesOnlyWhenItsInputsChange) {
  CommandResult r = configure(kCMakeLists);
  ASSERT_EQ(r.exit_code, 0) << r.out;

  r = build_it();
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "tlmc: compiling")) << r.out;
  EXPECT_TRUE(fs::exists(library()));
  EXPECT_TRUE(fs::exists(build() + "/tlmc/mynet/mynet.h"))
      << "the header is named after the library";
  r = run_app();
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<float> want = expected_output(weights(0.25f));
  std::vector<float> got = parse_output(r.out);
  ASSERT_EQ(got.size(), 3u) << r.out;
  for (size_t j = 0; j < 3; ++j) EXPECT_FLOAT_EQ(got[j], want[j]) << "y[" << j << "]";

  {
    SCOPED_TRACE("nothing changed: nothing to do");
    r = build_it();
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "no work to do")) << r.out;
    EXPECT_FALSE(contains(r.out, "tlmc: compiling")) << r.out;
  }
  {
    SCOPED_TRACE("the model touched: tlmc runs again; the same bytes leave the library as it was");
    const auto before = fs::last_write_time(library());
    fs::last_write_time(model(), fs::file_time_type::clock::now());
    expect_newer_than_library(model());
    r = build_it();
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "tlmc: compiling")) << r.out;
    EXPECT_EQ(fs::last_write_time(library()), before) << "an unchanged output is not rewritten";
    r = build_it();
    EXPECT_TRUE(contains(r.out, "no work to do")) << r.out;
  }
  {
    SCOPED_TRACE("a weight file changed: the library is made again, with the new weights");
    write_file(weight_file(), weight_bytes(weights(-0.5f)));
    fs::last_write_time(weight_file(), fs::file_time_type::clock::now());
    expect_newer_than_library(weight_file());
    r = build_it();
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "tlmc: compiling")) << r.out;
    r = run_app();
    ASSERT_EQ(r.exit_code, 0) << r.out;
    want = expected_output(weights(-0.5f));
    got = parse_output(r.out);
    ASSERT_EQ(got.size(), 3u) << r.out;
    for (size_t j = 0; j < 3; ++j) EXPECT_FLOAT_EQ(got[j], want[j]) << "y[" << j << "]";
  }
  {
    SCOPED_TRACE("after the regeneration: nothing to do again");
    r = build_it();
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "no work to do")) << r.out;
  }
}

// PRECISION bf16 is --precision bf16: the product reads its operands rounded to bfloat16
// (exact here: the weights are multiples of 1/4 below 2), for a target with a bf16 unit,
// which any host compiles for and one with AVX512_BF16 runs.
TEST_F(CMakeUserProject, PrecisionBf16ComputesTheProductsInBf16) {
  CommandResult r = configure(R"(cmake_minimum_required(VERSION 3.20)
project(user_of_tlmc C)
find_package(tlmc REQUIRED)
tlmc_add_library(mynet MODEL model/tiny.yaml TARGET x86-64-avx512-bf16 OPT -O0 THREADS 1
                 PRECISION bf16)
add_executable(app main.c)
target_link_libraries(app PRIVATE mynet)
)");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = run_command("cmake --build " + quoted(build()) + " -v");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "--precision bf16")) << r.out;
  EXPECT_TRUE(contains(r.out, "bf16: 1 of")) << r.out;  // the build's summary
  if (ir::host_target().bf16 == ir::Bf16Unit::None) GTEST_SKIP() << "this CPU has no AVX512_BF16";
  r = run_app();
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::vector<float> want = expected_output(weights(0.25f));
  const std::vector<float> got = parse_output(r.out);
  ASSERT_EQ(got.size(), 3u) << r.out;
  for (size_t j = 0; j < 3; ++j) EXPECT_FLOAT_EQ(got[j], want[j]) << "y[" << j << "]";
}

TEST_F(CMakeUserProject, BadArgumentsSayWhatToWrite) {
  CommandResult r = configure(R"(cmake_minimum_required(VERSION 3.20)
project(user_of_tlmc C)
find_package(tlmc REQUIRED)
tlmc_add_library(mynet MODEL model/tiny.yaml OPT 2)
)");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_TRUE(
      contains(one_line(r.out),
               "OPT '2' is not an optimisation level; write OPT -O0, OPT -O1, OPT -O2 or OPT -O3"))
      << r.out;
  r = configure(R"(cmake_minimum_required(VERSION 3.20)
project(user_of_tlmc C)
find_package(tlmc REQUIRED)
tlmc_add_library(mynet MODEL model/tiny.yaml PRECISION fp16)
)");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_TRUE(
      contains(one_line(r.out),
               "PRECISION 'fp16' is not a precision; write PRECISION fp32 or PRECISION bf16"))
      << r.out;
}

// A CUDA target from a project that uses find_package(CUDAToolkit): the archive links with
// the CUDA runtime through the imported target; the program initialises the model (on a GPU
// it runs it and gives the numbers; without one CUDA refuses, as NAME_ERROR_CUDA).
const char* kCudaMain = R"(#include <cstdio>
#include "mynet.h"
int main() {
  mynet_model* model = nullptr;
  const int init = mynet_init(&model);
  std::printf("init %d\n", init);
  if (init != MYNET_OK) return 0;
  float x[4] = {1, 2, 3, 4}, y[3];
  void *dx = nullptr, *dy = nullptr, *ws = nullptr;
  cudaMalloc(&dx, sizeof x);
  cudaMalloc(&dy, sizeof y);
  cudaMalloc(&ws, mynet_workspace_size() + 16);
  cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
  const void* inputs[] = {dx};
  void* outputs[] = {dy};
  const int rc = mynet_run(model, inputs, outputs, ws);
  cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost);
  std::printf("y %.9g %.9g %.9g\n", y[0], y[1], y[2]);
  mynet_free(model);
  return rc;
}
)";

TEST_F(CMakeUserProject, CudaTargetLinksWithTheCudaToolkit) {
  if (run_command("command -v nvcc || ls /usr/local/cuda/bin/nvcc").exit_code != 0)
    GTEST_SKIP() << "no CUDA toolkit here";
  write_file(source() + "/main.cc", kCudaMain);
  CommandResult r = configure(R"(cmake_minimum_required(VERSION 3.20)
project(user_of_tlmc CXX)
find_package(CUDAToolkit REQUIRED)
find_package(tlmc REQUIRED)
tlmc_add_library(mynet MODEL model/tiny.yaml TARGET cuda-sm80 OPT -O0)
add_executable(app main.cc)
target_link_libraries(app PRIVATE mynet)
)");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = build_it();
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = run_app();
  ASSERT_EQ(r.exit_code, 0) << r.out;
  if (r.out == "init 3\n") return;  // no GPU here
  const std::vector<float> want = expected_output(weights(0.25f));
  const std::vector<float> got = parse_output(r.out.substr(r.out.find('\n') + 1));
  ASSERT_EQ(got.size(), 3u) << r.out;
  for (size_t j = 0; j < 3; ++j) EXPECT_FLOAT_EQ(got[j], want[j]) << "y[" << j << "]";
}

}  // namespace
}  // namespace tlmc::test
