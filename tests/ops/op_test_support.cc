#include "ops/op_test_support.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

#include "driver/check.h"
#include "driver/compile.h"
#include "ir/lower.h"
#include "scheduler/decision.h"
#include "scheduler/lower_schedule.h"
#include "scheduler/partition.h"
#include "scheduler/sketch.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

// Whether TLMC_OPS_GPU_ONLY=1 asks for the GPU's target alone (bench/gpu_session.sh: the
// others ran where the suite runs, and the GPU's time is short).
bool gpu_only() {
  const char* v = std::getenv("TLMC_OPS_GPU_ONLY");
  return v && std::string(v) == "1";
}

// The plain-C target, the host's best SIMD target, a CUDA target whose library runs in the
// CPU emulator, and the GPU here, where there is one that runs tlmc's code (a driver as new
// as NVRTC's CUDA, nvcc: driver::gpu_cannot_run, as the GPU tests ask); with gpu_only(),
// the GPU alone, and a failure where there is none.
std::vector<ir::Target> targets() {
  if (gpu_only()) {
    std::optional<ir::Target> gpu = ir::parse_target("cuda");
    const std::string why = gpu ? driver::gpu_cannot_run(*gpu) : ir::unknown_target("cuda");
    if (why.empty()) return {*gpu};
    ADD_FAILURE() << "TLMC_OPS_GPU_ONLY=1, and no GPU here runs tlmc's code: " << why;
    return {};
  }
  std::vector<ir::Target> out = {*ir::parse_target("x86-64")};
  const ir::Target host = ir::host_target();
  if (host.isa != ir::Isa::Generic) out.push_back(host);
  ir::Target emulated = *ir::parse_target("cuda-sm80");
  emulated.runs_here = false;  // emulated even where a GPU of sm_80 is present
  out.push_back(emulated);
  if (std::optional<ir::Target> gpu = ir::parse_target("cuda"))
    if (driver::gpu_cannot_run(*gpu).empty()) out.push_back(*gpu);
  return out;
}

// Schedules drawn at random from the spaces, per model and target, beside the default one;
// TLMC_RANDOM_SCHEDULES=N draws N (seeds 0 to N - 1), for a longer sweep by hand.
int64_t random_schedules() {
  const char* n = std::getenv("TLMC_RANDOM_SCHEDULES");
  return n && std::atoll(n) > 0 ? std::atoll(n) : 3;
}

void expect_passes(const driver::CompiledModel& m, const ir::Target& t) {
  driver::CheckResult r = driver::check_model(m, t);
  std::ostringstream report;
  driver::print_check(report, r);
  if (!r.passed)
    for (const codegen::KernelInfo& k : m.plan.kernels)
      report << "kernel " << k.loops.name << " schedule:\n" << k.schedule;
  EXPECT_TRUE(r.passed) << report.str();
}

// driver::compile_model's steps after folding: partition, lower, schedule, plan, emit.
// seed < 0: the default schedules; else schedules drawn at random from the spaces.
driver::CompiledModel compile_unfolded(const ir::Graph& g, const ir::Target& target, int64_t seed) {
  driver::CompiledModel m;
  m.graph = g;
  const scheduler::Partition partition = scheduler::partition_graph(g);
  std::vector<codegen::KernelInfo> kernels;
  std::vector<codegen::CompiledSubgraph> subgraphs;
  for (const std::vector<int>& nodes : partition.subgraphs) {
    ir::LoweredSubgraph lowered = ir::lower_subgraph(g, nodes);
    const std::vector<scheduler::Decision> schedule =
        seed < 0 ? scheduler::default_schedule(lowered.program, target)
                 : scheduler::random_schedule(lowered.program, target,
                                              static_cast<uint64_t>(seed) + kernels.size());
    const std::string name = g.name + "_k" + std::to_string(kernels.size());
    kernels.push_back(codegen::KernelInfo{
        scheduler::lower_schedule(scheduler::apply_schedule(lowered.program, schedule), name),
        ir::workload_key(lowered.program), scheduler::schedule_str(schedule)});
    codegen::CompiledSubgraph sg{nodes, static_cast<int>(kernels.size()) - 1,
                                 lowered.input_tensors};
    sg.param_tensors.insert(sg.param_tensors.end(), lowered.output_tensors.begin(),
                            lowered.output_tensors.end());
    subgraphs.push_back(std::move(sg));
  }
  m.plan = codegen::plan_model(g, partition.storage_of, subgraphs, std::move(kernels));
  m.files = codegen::emit_c(m.plan, codegen::CodegenOptions{target, 0});
  return m;
}

}  // namespace

void expect_matches_reference(const std::string& yaml) {
  TempDir dir;
  const std::string path = dir.file("model.yaml");
  write_file(path, yaml);
  // A model with convolutions or pools is checked in every activation layout: each lowers
  // them differently (channels-last and blocked graphs, merged spatial rows in the model's
  // layout).
  // (On a CPU target: a CUDA target keeps the model's layout.)
  for (const ir::Target& t : targets()) {
    std::vector<driver::ActivationLayout> layouts = {driver::ActivationLayout::Model};
    if (!t.is_cuda() &&
        (yaml.find("Conv") != std::string::npos || yaml.find("Pool") != std::string::npos)) {
      layouts.push_back(driver::ActivationLayout::ChannelsLast);
      layouts.push_back(driver::ActivationLayout::Blocked);
    }
    for (driver::ActivationLayout layout : layouts) {
      SCOPED_TRACE("target " + t.name +
                   (layout == driver::ActivationLayout::Model          ? ", the model's layout"
                    : layout == driver::ActivationLayout::ChannelsLast ? ", channels-last"
                                                                       : ", blocked"));
      driver::CompileOptions o;
      o.model_path = path;
      o.target = t;
      o.activation_layout = layout;
      const driver::CompiledModel m = driver::compile_model(o);
      expect_passes(m, t);
      // NVRTC built every CUDA kernel within the target's limits (a kernel over one throws);
      // the -O0 point of every operator keeps to its registers.
      for (const ir::KernelResources& k : m.cuda_kernels)
        EXPECT_EQ(k.spill_stores + k.spill_loads, 0) << k.name << " spills at -O0";
      for (int64_t seed = 0; seed < random_schedules(); ++seed) {
        SCOPED_TRACE("schedules drawn at random, seed " + std::to_string(seed));
        o.random_schedule_seed = seed;
        // The emulator runs threads and blocks in reverse order for odd seeds: a kernel
        // right in one order only is wrong.
        setenv("TLMC_EMULATION_ORDER", seed % 2 ? "reverse" : "forward", 1);
        expect_passes(driver::compile_model(o), t);
      }
      unsetenv("TLMC_EMULATION_ORDER");
    }
  }
}

void expect_bf16_matches_reference(const std::string& yaml,
                                   frontend::PrecisionOptions::Storage storage) {
  if (gpu_only()) GTEST_SKIP() << "bf16 products are CPU targets' (TLMC_OPS_GPU_ONLY=1)";
  TempDir dir;
  const std::string path = dir.file("model.yaml");
  write_file(path, yaml);
  std::vector<ir::Target> cpus = {*ir::parse_target("x86-64")};
  if (ir::host_target().isa != ir::Isa::Generic) cpus.push_back(ir::host_target());
  for (ir::Target t : cpus) {
    SCOPED_TRACE("target " + t.name + ", bf16");
    if (t.bf16 == ir::Bf16Unit::None) t.bf16 = ir::Bf16Unit::Avx512Bf16;
    driver::CompileOptions o;
    o.model_path = path;
    o.target = t;
    o.bf16 = true;
    o.precision.storage = storage;
    for (int64_t seed = -1; seed < random_schedules(); ++seed) {
      SCOPED_TRACE("schedule seed " + std::to_string(seed) + " (-1: the default)");
      o.random_schedule_seed = seed;
      const driver::CompiledModel m = driver::compile_model(o);
      const driver::CheckResult r = driver::check_model(m, t);
      std::ostringstream report;
      driver::print_check(report, r);
      EXPECT_TRUE(r.compiled_exactly) << report.str();
      EXPECT_TRUE(r.passed) << report.str();
    }
  }
}

void expect_unfolded_matches_reference(const ir::Graph& g) {
  for (const ir::Target& t : targets()) {
    SCOPED_TRACE("target " + t.name);
    expect_passes(compile_unfolded(g, t, -1), t);
    for (int64_t seed = 0; seed < random_schedules(); ++seed) {
      SCOPED_TRACE("schedules drawn at random, seed " + std::to_string(seed));
      expect_passes(compile_unfolded(g, t, seed), t);
    }
  }
}

}  // namespace tlmc::test
