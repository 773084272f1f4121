// CUDA candidates go through the measurement frame the CPU's use: the tuner's searches
// propose points of the GPU spaces, each is lowered, emitted as CUDA and built by NVRTC into
// a cubin, and a forked worker runs it on the GPU, checked against the reference before it
// is timed. Here, without a GPU, the worker reports that the machine failed, for every
// candidate, and the tuner stops with that reason, recording nothing: the frame up to the
// GPU runs in these tests; where a GPU is present, the GPU's part runs too and the records
// are measured times.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "frontend/yaml_reader.h"
#include "ir/cuda_device.h"
#include "ir/diagnostic.h"
#include "ir/lower.h"
#include "lm/default_model.h"
#include "scheduler/partition.h"
#include "scheduler/sketch_rules.h"
#include "support/test_support.h"
#include "toolchain/nvrtc.h"
#include "tune/cost_model.h"
#include "tune/gpu_candidate.h"
#include "tune/measurer.h"
#include "tune/search_strategy.h"
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

// Whether candidates of `target` run on a GPU here: one of its SM, with a driver of NVRTC's
// CUDA or later (driver::gpu_cannot_run's test, which this layer cannot call).
bool runs_on_a_gpu(const ir::Target& target) {
  return ir::find_cuda_gpu(nullptr).has_value() && target.runs_here &&
         ir::cuda_driver_version() / 1000 >= toolchain::nvrtc_major_version();
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

MeasureOptions quick() {
  MeasureOptions o;
  o.min_seconds = 0.001;
  o.repeats = 3;
  o.timeout_seconds = 20;
  return o;
}

// Every search the CPU tunes with, on a CUDA target: the uniform one, the CUDA language
// model's, and the evolutionary one with its cost model learning from the GPU programs'
// loop features. Each batch's candidates are built by NVRTC and run by the worker: on the
// GPU where there is one, checked and timed; here the worker reports that the machine
// failed (no driver), never a fault of the candidate.
TEST(GpuMeasurement, EverySearchsCandidatesAreBuiltAndRunOnTheGpuOrTheMachineSaysWhyNot) {
  if (toolchain::nvrtc_major_version() == 0) GTEST_SKIP() << "no NVRTC: nothing is built";
  const ir::Target target = gpu_target();
  const bool gpu = runs_on_a_gpu(target);
  const MeasureTask task = matmul_task();
  const scheduler::Sketches sketches = scheduler::generate_sketches(task.program, target);
  ModelSearchOptions by_model;
  by_model.model = &lm::default_model(target);
  CostModel cost_model;
  EvolutionOptions evolution;
  evolution.population = 8;
  evolution.generations = 1;
  evolution.confident_samples = 4;
  std::vector<std::pair<const char*, std::unique_ptr<SearchStrategy>>> searches;
  searches.emplace_back("random", make_random_search(sketches, 1));
  searches.emplace_back("the CUDA model's",
                        make_model_search(sketches, task.program, target, by_model, 2));
  searches.emplace_back("evolutionary",
                        make_evolutionary_search(sketches, target, cost_model, 0, evolution, 3));
  Measurer measurer(task, target, quick());
  for (auto& [name, search] : searches)
    for (int round = 0; round < 2; ++round) {
      SCOPED_TRACE(std::string(name) + ", round " + std::to_string(round));
      const std::vector<scheduler::SpacePoint> points = search->propose(4);
      ASSERT_FALSE(points.empty());
      std::vector<std::vector<scheduler::Decision>> schedules;
      for (const scheduler::SpacePoint& p : points)
        schedules.push_back(sketches[p.sketch].decisions(p.values));
      const std::vector<MeasureResult> results = measurer.measure_batch(schedules, 2);
      ASSERT_EQ(results.size(), points.size());
      for (size_t i = 0; i < points.size(); ++i) {
        const MeasureResult& r = results[i];
        search->observe(points[i], r);
        if (r.status == MeasureStatus::CompileError && !r.environment) {
          // NVRTC built it; a point over a limit of the descriptor (registers are known only
          // once built) is refused before it runs.
          EXPECT_NE(r.reason.find("over the limits of"), std::string::npos) << r.reason;
          continue;
        }
        if (gpu) {
          EXPECT_EQ(r.status, MeasureStatus::Ok) << r.reason;
          EXPECT_GT(r.seconds, 0);
        } else {
          EXPECT_TRUE(r.environment) << r.reason;
          EXPECT_FALSE(r.reason.empty());
        }
      }
    }
}

// The tuner stops where the machine fails, with the reason, and records nothing of it;
// on a GPU, it records the measured times.
TEST(GpuMeasurement, TheTunerRecordsMeasuredTimesOrStopsWithTheMachinesReason) {
  if (toolchain::nvrtc_major_version() == 0) GTEST_SKIP() << "no NVRTC: nothing is built";
  const ir::Target target = gpu_target();
  const bool gpu = runs_on_a_gpu(target);
  const MeasureTask task = matmul_task();
  test::TempDir dir;
  scheduler::TuningDb db =
      scheduler::TuningDb::open(dir.file("tuning.db"), scheduler::DbAccess::Write);
  TuneOptions o;
  o.search = SearchKind::Model;
  o.model_search.model = &lm::default_model(target);
  o.trials = 4;
  o.batch = 2;
  o.measure = quick();
  std::ostringstream progress;
  if (!gpu) {
    try {
      tune_tasks({TuneTask{task, 1}}, target, db, o, progress, false);
      ADD_FAILURE() << "tuned without a GPU";
    } catch (const Diagnostic& e) {
      EXPECT_NE(std::string(e.what()).find("not for a candidate's fault"), std::string::npos)
          << e.what();
    }
    EXPECT_TRUE(db.records(task.workload_key, target.descriptor()).empty());
    return;
  }
  const std::vector<TaskReport> reports =
      tune_tasks({TuneTask{task, 1}}, target, db, o, progress, false);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_GT(reports[0].default_seconds, 0);
  int ok = 0;
  for (const scheduler::TuningRecord& r : db.records(task.workload_key, target.descriptor()))
    ok += r.status == MeasureStatus::Ok;
  EXPECT_GE(ok, 3) << "the -O0 point and the trials, checked and timed";
}

}  // namespace
}  // namespace tlmc::tune
