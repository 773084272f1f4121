// Models written to cost the compiler time or memory, or to read what they should not, are
// refused through the real command before any large allocation: exit 1, a message that
// says what and where, at most 400 MB resident and 20 s (each takes well under a second and
// 100 MB; the bounds are the documented targets, far from noise), and nothing written.
#include <gtest/gtest.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "support/test_support.h"

namespace tlmc::test {
namespace {

namespace fs = std::filesystem;

// Under ASan (a TLMC_SANITIZE build) tlmc's own memory grows by its shadow and quarantine:
// the bounds grow by what that costs (about 3x), the refusals are the same.
#ifdef TLMC_SANITIZED
constexpr long kSanitizerFactor = 3;
#else
constexpr long kSanitizerFactor = 1;
#endif
constexpr long kMaxResidentKib = 400 * 1024 * kSanitizerFactor;
constexpr double kMaxSeconds = 20;

struct Hostile {
  const char* name;
  // YAML text of m.yaml, or "onnx:KIND" for make_test_models.py's hostile_KIND.
  std::string model;
  const char* message;  // a part of the message
};

void PrintTo(const Hostile& h, std::ostream* os) { *os << h.name; }

// YAML that repeats a list of ten tens through nine levels of aliases: 10^10 nodes.
std::string billion_laughs() {
  std::string s = "tlmc: 1\nname: m\nlaughs:\n  l0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n";
  for (int i = 1; i < 10; ++i) {
    std::string p = "*l" + std::to_string(i - 1);
    s += "  l" + std::to_string(i) + ": &l" + std::to_string(i) + " [" + p;
    for (int k = 1; k < 10; ++k) s += ", " + p;
    s += "]\n";
  }
  return s + "nodes: []\noutputs: []\n";
}

#define HEAD "tlmc: 1\nname: m\ninputs:\n  x: {shape: [1, 1, 4, 4]}\n"
#define CONV(ATTRS)                                                                \
  HEAD "weights:\n  w: {shape: [1, 1, 3, 3], init: ones}\nnodes:\n  - {op: Conv, " \
       "inputs: [x, w], outputs: [y], attrs: {" ATTRS "}}\noutputs: [y]\n"

const Hostile kHostile[] = {
    {"16 GiB of zeros in a line",
     HEAD "weights:\n  w: {shape: [65536, 65536], init: zeros}\nnodes: []\noutputs: [x]\n",
     "brings the model's weights to 17179869184 bytes; tlmc reads at most 2147483648"},
    {"a shape whose element count overflows",
     "tlmc: 1\nname: m\ninputs:\n  x: {shape: [4294967296, 4294967296, 4294967296]}\n"
     "nodes: []\noutputs: [x]\n",
     "beyond tlmc's limits"},
    {"a kernel of 2^40", CONV("kernel_shape: [1099511627776, 3]"), "beyond tlmc's limit"},
    {"a stride of 0", CONV("strides: [0, 1]"), "strides"},
    {"a negative stride", CONV("strides: [-1, 1]"), "strides"},
    {"a dilation of 0", CONV("dilations: [1, 0]"), "dilations"},
    {"a billion laughs", billion_laughs(), "YAML nodes by here (an alias counts as the nodes"},
    {"nesting a hundred thousand deep",
     HEAD "nodes: " + std::string(100000, '[') + std::string(100000, ']') + "\n",
     "the YAML nests deeper than 64 lists and maps here"},
    {"a weight file at an absolute path",
     HEAD "weights:\n  w: {shape: [4], dtype: uint8, file: /etc/passwd}\nnodes: []\n"
          "outputs: [x]\n",
     "weight 'w': its file names the absolute path '/etc/passwd'"},
    {"a weight file above the model's folder",
     HEAD "weights:\n  w: {shape: [4], dtype: uint8, file: ../outside.bin}\nnodes: []\n"
          "outputs: [x]\n",
     "weight 'w': its file names '../outside.bin', which leads out of the model's folder"},
    {"a weight file linked out of the model's folder",
     HEAD "weights:\n  w: {shape: [4], dtype: uint8, file: link.bin}\nnodes: []\n"
          "outputs: [x]\n",
     "a symlink to"},
    {"ONNX external data at an absolute path", "onnx:absolute_location",
     "initializer 'w': its external data names the absolute path '/etc/passwd'"},
    {"ONNX typed values fewer than the shape needs", "onnx:typed_values",
     "initializer 'w' has 3 values, its shape needs 268435456"},
    {"an ONNX file cut short of its 64 MiB initializer", "onnx:truncated",
     "not a readable ONNX model: the file is truncated"},
    {"an ONNX kernel of 2^40", "onnx:huge_kernel", "error: "},
    {"an ONNX convolution of stride 0", "onnx:zero_stride",
     "has strides 0: each must be at least 1"},
    {"an ONNX max-pool of stride 0 (a crash in ONNX's shape inference)", "onnx:pool_zero_stride",
     "MaxPool node 'pool' has strides 0: each must be at least 1"},
};

class HostileModel : public ::testing::TestWithParam<Hostile> {};

TEST_P(HostileModel, IsRefusedCheaplyWritingNothing) {
  const Hostile& h = GetParam();
  TempDir dir;
  const std::string folder = dir.file("model");
  fs::create_directories(folder);
  std::string model;
  if (h.model.rfind("onnx:", 0) == 0) {
    const CommandResult made =
        run_command("/usr/bin/python3 " + std::string(TLMC_SOURCE_DIR) +
                    "/tests/onnx/make_test_models.py hostile_" + h.model.substr(5) + " " + folder);
    ASSERT_EQ(made.exit_code, 0) << made.out;
    model = folder + "/model.onnx";
  } else {
    model = folder + "/m.yaml";
    write_file(model, h.model);
    write_file(dir.file("outside.bin"), "secret");
    fs::create_symlink(dir.file("outside.bin"), folder + "/link.bin");
  }
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = run_command(std::string(TLMC_EXE) + " -O0 " + model + " -o " +
                                      dir.file("out/libm.a") + " 2>&1");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find(h.message), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("error: internal"), std::string::npos) << r.out;
  EXPECT_LT(r.peak_resident_kib, kMaxResidentKib) << r.out;
  EXPECT_LT(seconds, kMaxSeconds) << r.out;
  EXPECT_EQ(count_entries(dir.file("out")), 0) << "nothing written";
  std::printf("%s: %.2f s, %ld KiB\n", h.name, seconds, r.peak_resident_kib);
}

// A file past the size limit is refused before it is read: 65 MiB of comment.
TEST(HostileYaml, AFilePastTheSizeLimitIsRefusedUnread) {
  TempDir dir;
  {
    std::string line(1023, ' ');
    line[0] = '#';
    line += '\n';
    std::string text = HEAD "nodes: []\noutputs: [x]\n";
    text.reserve(66 << 20);
    while (text.size() < (65u << 20)) text += line;
    write_file(dir.file("m.yaml"), text);
  }
  const CommandResult r = run_command(std::string(TLMC_EXE) + " -O0 " + dir.file("m.yaml") +
                                      " -o " + dir.file("out/libm.a") + " 2>&1");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("bytes of YAML; tlmc reads at most 67108864 (64 MiB)"), std::string::npos)
      << r.out;
  EXPECT_LT(r.peak_resident_kib, 200 * 1024 * kSanitizerFactor) << "the file is never read whole";
  EXPECT_EQ(count_entries(dir.file("out")), 0);
}

// Pads larger than a small input are legal ONNX, and are compiled and checked, not refused.
TEST(HostileYaml, PadsLargerThanTheInputAreLegal) {
  TempDir dir;
  write_file(dir.file("m.yaml"),
             "tlmc: 1\nname: m\ninputs:\n  x: {shape: [1, 2, 2, 3]}\n"
             "weights:\n  w: {shape: [3, 2, 3, 3], init: {uniform: [-1, 1]}}\n"
             "  p: {shape: [8], dtype: int64, data: [0, 0, 9, 0, 0, 0, 7, 11]}\n"
             "nodes:\n  - {op: Conv, inputs: [x, w], outputs: [y], "
             "attrs: {pads: [5, 6, 4, 7], strides: [2, 3]}}\n"
             "  - {op: Pad, inputs: [y, p], outputs: [z]}\noutputs: [z]\n");
  const CommandResult r =
      run_command(std::string(TLMC_EXE) + " --check -O0 " + dir.file("m.yaml") + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Kinds, HostileModel, ::testing::ValuesIn(kHostile),
                         [](const ::testing::TestParamInfo<Hostile>& i) {
                           std::string n;
                           for (char c : std::string(i.param.name))
                             n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

}  // namespace
}  // namespace tlmc::test
