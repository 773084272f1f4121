// ONNX import through the real command and pipeline, on files written by ONNX's own Python
// package and by PyTorch's exporter (tests/onnx/make_test_models.py): results against
// numpy's or PyTorch's, every unsupported thing in one error, symbolic dimensions,
// external data, older opsets, and `tlmc import`.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "driver/compile.h"
#include "support/test_support.h"
#include "toolchain/isolated_run.h"

namespace tlmc::test {
namespace {

namespace fs = std::filesystem;

// A model made by make_test_models.py in a fresh folder, m/ inside a temporary one (some
// layouts put files beside the model's folder). `model` is the model file's path inside m/.
class OnnxModel {
 public:
  explicit OnnxModel(const std::string& name, const std::string& model = "model.onnx")
      : model_(model) {
    fs::create_directories(dir());
    CommandResult r = run_command("/usr/bin/python3 " + std::string(TLMC_SOURCE_DIR) +
                                  "/tests/onnx/make_test_models.py " + name + " " + dir());
    EXPECT_EQ(r.exit_code, 0) << r.out;
  }
  std::string dir() const { return tmp_.file("m"); }
  std::string path() const { return dir() + "/" + model_; }
  // A file beside the model file.
  std::string file(const std::string& f) const {
    return (fs::path(path()).parent_path() / f).string();
  }
  std::string tlmc(const std::string& args) const {
    return std::string(TLMC_EXE) + " -O0 " + path() + " " + args;
  }

 private:
  TempDir tmp_;
  std::string model_;
};

std::vector<uint8_t> bytes_of(const std::string& path) {
  const std::string s = read_file(path);
  return std::vector<uint8_t>(s.begin(), s.end());
}

// Compiles the model, runs it on in0.bin and returns the largest |got - want| / (1 + |want|)
// against want0.bin.
double error_against_expected(const OnnxModel& m, const ir::Target& target) {
  driver::CompileOptions o;
  o.model_path = m.path();
  o.target = target;
  driver::CompiledModel compiled = driver::compile_model(o);
  TempDir build;
  const std::string so = driver::build_shared_library(compiled, build.path(), target);
  const std::vector<uint8_t> want = bytes_of(m.file("want0.bin"));
  toolchain::IsolatedRun run = toolchain::run_isolated(
      so, compiled.plan.name, {bytes_of(m.file("in0.bin"))}, {want.size()}, 60);
  EXPECT_EQ(run.status, toolchain::IsolatedRun::Ok) << run.message;
  if (run.status != toolchain::IsolatedRun::Ok) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < want.size() / 4; ++i) {
    float g, w;
    std::memcpy(&g, run.outputs[0].data() + 4 * i, 4);
    std::memcpy(&w, want.data() + 4 * i, 4);
    worst = std::max(worst, std::fabs(double(g) - w) / (1.0 + std::fabs(w)));
  }
  return worst;
}

class TorchExport : public ::testing::TestWithParam<const char*> {};

TEST_P(TorchExport, MatchesPyTorchsOwnOutput) {
  OnnxModel m(GetParam());
  // float32 throughout, BatchNormalization folded into the convolutions: 1e-4 relative.
  EXPECT_LT(error_against_expected(m, ir::host_target()), 1e-4);
  CommandResult check = run_command(m.tlmc("--check"));
  EXPECT_EQ(check.exit_code, 0) << check.out;
}

INSTANTIATE_TEST_SUITE_P(Opsets, TorchExport,
                         ::testing::Values("torch_cnn_op13", "torch_cnn_op17"));

TEST(OnnxImport, OlderOpsetFormsKeepTheirMeaning) {
  OnnxModel m("opset11");  // Softmax over a flattened 2-D view; ReduceSum axes attribute
  EXPECT_LT(error_against_expected(m, ir::host_target()), 1e-6);
}

TEST(OnnxImport, ConstantNodesAndDoubleInitializersBecomeWeights) {
  OnnxModel m("constants");
  EXPECT_LT(error_against_expected(m, ir::host_target()), 1e-6);
}

// A DOUBLE initializer that Max reads stays float64: the output is the model's doubles to
// the bit (0.1 and 1 + 2^-40 are not float32 values).
TEST(OnnxImport, DoubleInitializersReadInFloat64StayFloat64) {
  OnnxModel m("double_initializer");
  driver::CompileOptions o;
  o.model_path = m.path();
  o.target = ir::host_target();
  const driver::CompiledModel compiled = driver::compile_model(o);
  TempDir build;
  const std::string so = driver::build_shared_library(compiled, build.path(), o.target);
  const std::vector<uint8_t> want = bytes_of(m.file("want0.bin"));
  ASSERT_EQ(want.size(), 24u);
  const toolchain::IsolatedRun run = toolchain::run_isolated(
      so, compiled.plan.name, {bytes_of(m.file("in0.bin"))}, {want.size()}, 60);
  ASSERT_EQ(run.status, toolchain::IsolatedRun::Ok) << run.message;
  EXPECT_EQ(run.outputs[0], want);
}

TEST(OnnxImport, ExternalDataIsReadAndMissingDataIsAnError) {
  OnnxModel m("external_data");
  EXPECT_LT(error_against_expected(m, ir::host_target()), 1e-6);
  fs::remove(m.file("weights.data"));
  CommandResult r = run_command(m.tlmc("-o " + m.file("out/libm.a")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(m.path() +
                       ": error: initializer 'w': its external data names 'weights.data', which "
                       "does not exist (looked for '" +
                       m.file("weights.data") + "')"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(count_entries(m.file("out")), 0);
}

// Regression: '../' in a location, or a symlink the model ships, read a file from outside
// the model's folder as weights, and the compile succeeded.
TEST(OnnxImport, ExternalDataOutsideTheModelsFolderIsRefused) {
  OnnxModel parent("external_data_parent");
  CommandResult r = run_command(parent.tlmc("-o " + parent.file("out/libm.a")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(parent.path() +
                       ": error: initializer 'w': its external data names '../outside/w.data', "
                       "which leads out of the model's folder through '..'"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(count_entries(parent.file("out")), 0);

  OnnxModel link("external_data_link_out");
  r = run_command(link.tlmc("-o " + link.file("out/libm.a")));
  EXPECT_EQ(r.exit_code, 1);
  const std::string target = fs::canonical(link.dir() + "/../outside/w.data").string();
  EXPECT_NE(r.out.find(link.path() +
                       ": error: initializer 'w': its external data names "
                       "'link.data', a symlink to '" +
                       target + "', outside the model's folder"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(count_entries(link.file("out")), 0);
}

// A symlink that stays in the folder is followed, and so is a model cache's layout, where
// the model file and its data are both links into one blobs folder.
TEST(OnnxImport, ExternalDataThroughSymlinksWithinTheModelsFolderIsRead) {
  OnnxModel inside("external_data_link_in");
  EXPECT_LT(error_against_expected(inside, ir::host_target()), 1e-6);
  OnnxModel cache("external_data_cache", "snapshots/rev/model.onnx");
  EXPECT_LT(error_against_expected(cache, ir::host_target()), 1e-6);
}

// Regression: a 75-byte model declaring a [16384, 16384] initializer made tlmc allocate the
// whole tensor (1.1 GB resident for float, 2.1 GB for int64) before it compared the size
// with the 4 bytes present. Now the refusal comes first, at the memory of a small model's.
TEST(OnnxImport, OversizedInitializersAreRefusedBeforeTheyAreAllocated) {
  OnnxModel small("symbolic");  // refused right after reading, for the baseline
  const CommandResult baseline = run_command(small.tlmc(""));
  ASSERT_EQ(baseline.exit_code, 1) << baseline.out;
  const struct {
    const char* model;
    std::string message;
  } cases[] = {
      {"oversized_float",
       ": error: initializer 'w' has 4 bytes of data, its shape needs 1073741824"},
      {"oversized_int64",
       ": error: initializer 'w' has 4 bytes of data, its shape needs 2147483648"},
      {"oversized_external",
       ": error: initializer 'w': external file 'w.data' is too short (4 bytes, needs "
       "1073741824)"},
  };
  for (const auto& c : cases) {
    OnnxModel m(c.model);
    ASSERT_LT(fs::file_size(m.path()), 100u);
    const CommandResult r = run_command(m.tlmc("-o " + m.file("out/libm.a")));
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find(m.path() + c.message), std::string::npos) << r.out;
    EXPECT_EQ(count_entries(m.file("out")), 0);
    EXPECT_LT(r.peak_resident_kib, baseline.peak_resident_kib + 64 * 1024)
        << c.model << ": " << baseline.peak_resident_kib << " KiB for a small model";
  }
}

TEST(OnnxImport, EveryUnsupportedOperatorIsListedOnce) {
  OnnxModel m("unsupported");
  CommandResult r = run_command(m.tlmc("-o " + m.file("libm.a")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(m.path() + ": error: the model (opset 13) uses what tlmc does not support:\n"
                                  "  operator Mod (node 'mod_a', node 'mod_b')\n"
                                  "  operator NonZero (node 'nonzero')\n"
                                  "supported operators: "),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(m.file("libm.a")));
}

TEST(OnnxImport, SymbolicDimensionsNeedAnInputShape) {
  OnnxModel m("symbolic");
  CommandResult r = run_command(m.tlmc("-o " + m.file("libm.a")));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(
      r.out.find(
          "error: graph input 'x' has a symbolic dimension 'batch' (dimension 0): fix it with "
          "--input-shape x=D0xD1x..."),
      std::string::npos)
      << r.out;
  r = run_command(m.tlmc("--input-shape x=3x4 --check"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  r = run_command(m.tlmc("--input-shape x=3x5"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("error: --input-shape x sets dimension 1 to 5, but the model fixes it at 4"),
            std::string::npos)
      << r.out;
  r = run_command(m.tlmc("--input-shape x=3x4 --input-shape z=1"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("error: --input-shape names 'z', which is not an input of the model"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(run_command(m.tlmc("--input-shape x=3by4")).exit_code, 2);
}

TEST(OnnxImport, BadFilesAreClearErrors) {
  TempDir dir;
  OnnxModel m("symbolic");
  const std::string whole = read_file(m.path());
  write_file(dir.file("truncated.onnx"), whole.substr(0, whole.size() / 2));
  write_file(dir.file("text.onnx"), "tlmc: 1\nname: not_onnx\n");
  for (const char* f : {"truncated.onnx", "text.onnx"}) {
    CommandResult r = run_command(std::string(TLMC_EXE) + " -O0 " + dir.file(f));
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find(dir.file(f) + ": error: not a readable ONNX model"), std::string::npos)
        << r.out;
  }
  OnnxModel too_new("opset_too_new");
  CommandResult r = run_command(too_new.tlmc(""));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("error: the model uses opset 18; tlmc reads opsets 11 to 17"),
            std::string::npos)
      << r.out;
}

TEST(OnnxImport, ImportWritesYamlThatCompilesToTheSameLibrary) {
  OnnxModel m("torch_cnn_op17");
  CommandResult r =
      run_command(std::string(TLMC_EXE) + " import " + m.path() + " -o " + m.file("yaml/net.yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(m.file("yaml/net.bin")));
  ASSERT_EQ(run_command(m.tlmc("--name net -o " + m.file("from_onnx"))).exit_code, 0);
  r = run_command(std::string(TLMC_EXE) + " -O0 " + m.file("yaml/net.yaml") + " --name net -o " +
                  m.file("from_yaml"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* f : {"net.c", "net.h", "net_weights.bin"})
    EXPECT_TRUE(read_file(m.file(std::string("from_onnx/") + f)) ==
                read_file(m.file(std::string("from_yaml/") + f)))
        << f << " differs between the ONNX model and its YAML import";
}

}  // namespace
}  // namespace tlmc::test
