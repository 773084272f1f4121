// -O2 and -O3 for a CUDA target where no GPU times kernels: the analytic model ranks points
// drawn from the GPU spaces, the -O0 point among them, and the output says nothing was
// measured; no tuning record is written, the same model compiles to the same bytes twice,
// and the chosen kernels pass the emulated check.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "frontend/yaml_reader.h"
#include "ir/cuda_device.h"
#include "ir/lower.h"
#include "scheduler/partition.h"
#include "scheduler/sketch_rules.h"
#include "support/test_support.h"
#include "tune/gpu_estimate_search.h"

namespace tlmc::test {
namespace {

namespace fs = std::filesystem;

// An odd-sized product with its epilogue: no listed workload has these shapes.
const char* kModel = R"(tlmc: 1
name: odd
inputs:
  x: {shape: [100, 72]}
weights:
  w: {shape: [72, 200], init: {uniform: [-1, 1]}, seed: 3}
  b: {shape: [200], init: {uniform: [-1, 1]}, seed: 4}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: Add, inputs: [h, b], outputs: [a]}
  - {op: Relu, inputs: [a], outputs: [y]}
outputs: [y]
)";

TEST(EstimatedSchedules, TheChosenPointIsNoWorseThanTheDefaultByTheModel) {
  const ir::Graph g = frontend::read_yaml_text(kModel, "odd.yaml");
  const scheduler::Partition partition = scheduler::partition_graph(g);
  ASSERT_EQ(partition.subgraphs.size(), 1u);
  const ir::LoweredSubgraph lowered = ir::lower_subgraph(g, partition.subgraphs[0]);
  for (const char* target : {"cuda-sm80", "cuda-sm90"}) {
    SCOPED_TRACE(target);
    const ir::Target t = *ir::parse_target(target);
    const tune::EstimateChoice c = tune::choose_by_estimate(
        lowered.program, t, scheduler::generate_sketches(lowered.program, t), 32, 1);
    EXPECT_GT(c.ranked, 1);
    EXPECT_LE(c.chosen.seconds, c.default_point.seconds);
    EXPECT_GT(c.chosen.flops, 2.0 * 100 * 72 * 200 * 0.99);
    ASSERT_FALSE(c.chosen.launches.empty());
    EXPECT_FALSE(c.schedule.empty());
  }
}

TEST(EstimatedSchedules, SayNothingWasMeasuredAndCheckInTheEmulator) {
  if (ir::find_cuda_gpu(nullptr))
    GTEST_SKIP() << "a GPU is here: the note names it (tests/gpu measure on it)";
  TempDir dir;
  write_file(dir.file("odd.yaml"), kModel);
  const std::string db = dir.file("tuning.db");
  const std::string cmd = std::string(TLMC_EXE) + " -O2 -v --target cuda-sm80 --tuning-db " + db +
                          " " + dir.file("odd.yaml");
  CommandResult r = run_command(cmd + " --check 2>&1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("nothing was measured or recorded"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no GPU times CUDA kernels here ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the CUDA kernels ran in the CPU emulator"), std::string::npos) << r.out;
  // The -O0 point, the model's beam (4) and 16 samples, 31 uniform draws; fewer where
  // they coincide.
  const std::smatch ranked = [&] {
    std::smatch m;
    std::regex_search(r.out, m, std::regex(R"(best of (\d+) candidates)"));
    return m;
  }();
  ASSERT_FALSE(ranked.empty()) << r.out;
  EXPECT_GT(std::stoi(ranked[1]), 32) << "the model's proposals beside the uniform draws";
  EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(db)) << "an estimate became a tuning record";
  // Deterministic: the same text twice.
  ASSERT_EQ(run_command(cmd + " --emit source -o " + dir.file("a") + " 2>&1").exit_code, 0);
  ASSERT_EQ(run_command(cmd + " --emit source -o " + dir.file("b") + " 2>&1").exit_code, 0);
  EXPECT_EQ(read_file(dir.file("a/odd.cu")), read_file(dir.file("b/odd.cu")));
}

}  // namespace
}  // namespace tlmc::test
