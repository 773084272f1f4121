// CUDA candidates go through the measurement frame the CPU's use: the tuner's searches
// propose points of the GPU spaces, each is lowered, emitted as CUDA and built by NVRTC into
// a cubin, and a forked worker runs it on the GPU, checked against the reference before it
// is timed. Here, without a GPU, the worker says why for every candidate and nothing else
// fails: the frame up to the GPU runs in these tests; where a GPU is present, the GPU's part
// runs too and the records are measured times.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/yaml_reader.h"
#include "ir/cuda_device.h"
#include "ir/lower.h"
#include "lm/default_model.h"
#include "scheduler/partition.h"
#include "support/test_support.h"
#include "tune/gpu_candidate.h"
#include "tune/tuner.h"

namespace tlmc::tune {
namespace {

using scheduler::MeasureStatus;

// An odd-sized product and its epilogue.
MeasureTask matmul_task() {
  const ir::Graph g = frontend::read_yaml_text(R"(
tlmc: 1
name: mm
inputs:
  a: {shape: [24, 40]}
weights:
  b: {shape: [40, 50], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: MatMul, inputs: [a, b], outputs: [c]}
  - {op: Relu, inputs: [c], outputs: [y]}
outputs: [y]
)",
                                               "mm.yaml");
  const scheduler::Partition p = scheduler::partition_graph(g);
  return make_measure_task(g, p.subgraphs.at(0), ir::lower_subgraph(g, p.subgraphs.at(0)), 7);
}

// The GPU here when there is one (its own limits), else the A100 descriptor, which no GPU
// here runs.
ir::Target gpu_target() {
  if (std::optional<ir::Target> here = ir::parse_target("cuda")) return *here;
  return *ir::parse_target("cuda-sm80");
}

TEST(GpuMeasurement, LaunchesTravelAsText) {
  const std::vector<codegen::CudaLaunch> launches = {{"mm_k0_init", 7, 128, 0},
                                                     {"mm_k0", 3000000000, 1024, 99 * 1024}};
  const std::vector<codegen::CudaLaunch> back = decode_launches(encode_launches(launches));
  ASSERT_EQ(back.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(back[i].kernel, launches[i].kernel);
    EXPECT_EQ(back[i].blocks, launches[i].blocks);
    EXPECT_EQ(back[i].threads, launches[i].threads);
    EXPECT_EQ(back[i].dynamic_shared_bytes, launches[i].dynamic_shared_bytes);
  }
}

// Every search the CPU tunes with, on a CUDA target: the uniform one, the evolutionary one
// with its cost model on the GPU programs' loop features, and the CUDA language model's.
TEST(GpuMeasurement, EverySearchsCandidatesAreBuiltAndRunOnTheGpuOrSayWhyNot) {
  const ir::Target target = gpu_target();
  std::string why;
  const bool gpu = ir::find_cuda_gpu(&why).has_value() && target.runs_here;
  const MeasureTask task = matmul_task();
  for (SearchKind search : {SearchKind::Random, SearchKind::Evolutionary, SearchKind::Model}) {
    SCOPED_TRACE(search == SearchKind::Random         ? "random"
                 : search == SearchKind::Evolutionary ? "evolutionary"
                                                      : "the CUDA model's");
    test::TempDir dir;
    scheduler::TuningDb db = scheduler::TuningDb::open(dir.file("tuning.db"), true);
    TuneOptions o;
    o.search = search;
    o.trials = 6;
    o.batch = 3;
    o.measure.min_seconds = 0.001;
    o.measure.repeats = 3;
    o.measure.timeout_seconds = 20;
    o.evolution.population = 8;
    o.evolution.generations = 1;
    if (search != SearchKind::Random) o.model_search.model = &lm::default_model(target);
    std::ostringstream progress;
    const std::vector<TaskReport> reports =
        tune_tasks({TuneTask{task, 1}}, target, db, o, progress, false);
    ASSERT_EQ(reports.size(), 1u);
    const std::vector<scheduler::TuningRecord> records =
        db.records(task.workload_key, target.descriptor());
    ASSERT_GE(records.size(), 4u) << "the -O0 point and the trials, each recorded";
    int ok = 0;
    for (const scheduler::TuningRecord& r : records) {
      SCOPED_TRACE(r.schedule);
      if (r.status == MeasureStatus::Ok) {
        ++ok;
        EXPECT_GT(r.seconds, 0);
        continue;
      }
      // NVRTC built it; a point over a limit of the descriptor (registers are known only
      // once built) is refused before it runs.
      if (r.status == MeasureStatus::CompileError) {
        EXPECT_NE(r.reason.find("over the limits of"), std::string::npos) << r.reason;
        continue;
      }
      EXPECT_FALSE(gpu) << "failed on the GPU: " << r.reason;
      EXPECT_EQ(r.status, MeasureStatus::Crashed);
      EXPECT_NE(r.reason.find(why), std::string::npos) << r.reason << " | " << why;
    }
    if (gpu) {
      EXPECT_EQ(ok, static_cast<int>(records.size())) << "every candidate checked and timed";
      EXPECT_GT(reports[0].default_seconds, 0);
    } else {
      EXPECT_EQ(ok, 0) << "a time without a GPU";
    }
  }
}

}  // namespace
}  // namespace tlmc::tune
