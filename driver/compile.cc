#include "driver/compile.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <string>

#include "driver/choose_plan.h"
#include "driver/cuda_kernel_check.h"
#include "driver/generate.h"
#include "driver/layout_plans.h"
#include "driver/pipeline.h"
#include "frontend/fold_constants.h"
#include "frontend/model_name.h"
#include "frontend/onnx_reader.h"
#include "frontend/reduced_precision.h"
#include "frontend/yaml_reader.h"
#include "ir/cuda_device.h"
#include "ir/diagnostic.h"
#include "scheduler/tuning_db.h"
#include "toolchain/cuda_toolkit.h"
#include "toolchain/nvrtc.h"
#include "tune/schedule_choice.h"
#include "tune/shared_cache_probe.h"

// The compile pipeline (compile_model below), a list of steps read top to bottom: read the
// model, fold its constants, reduced precision, split it into layout plans (partition and
// lower each), choose the plan and the schedules (driver/choose_plan.h: tuning,
// measurements in the model), generate C (driver/generate.h), check CUDA kernels; writing
// the outputs is driver/output_files.cc's.
namespace tlmc::driver {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Why no GPU here runs `target`'s code (it does not run here).
std::string no_gpu_for(const ir::Target& target) {
  std::string why;
  const std::optional<ir::GpuLimits> here = ir::find_cuda_gpu(&why);
  if (!here) return "no GPU times CUDA kernels here (" + why + ")";
  if (here->sm != target.gpu.sm)
    return "the GPU here, " + here->device + ", is sm_" + std::to_string(here->sm) + ", not sm_" +
           std::to_string(target.gpu.sm) + ": it cannot time this target's kernels";
  ir::Target found = target;
  found.runs_here = true;
  return "nothing runs on the GPU here, " + here->device + ": " + gpu_cannot_run(found);
}

std::string why_not_measured_on_gpu(const CompileOptions& o) {
  if (o.target.runs_here) return "there is no tuning database (--tuning-db) to measure into";
  return no_gpu_for(o.target);
}

// The level compile_model works at: -O2 and -O3 measure, which needs a target that runs
// here and a tuning database; without them -O2 (the default) is -O1, with a note, and -O3
// an error.
int effective_level(const CompileOptions& o) {
  // -O1 ranks the CUDA language model's beam by the analytic model; -O2/-O3 measure on the
  // GPU here, else rank the model's proposals and points drawn from the spaces by the
  // analytic model: said once.
  if (o.target.is_cuda() && o.opt_level == 1 && o.random_schedule_seed < 0 && o.progress_stream)
    *o.progress_stream << "tlmc: note: -O1 for " << o.target.name
                       << ": each kernel's schedule is the analytic model's best estimate of "
                          "the CUDA language model's likeliest points and the -O0 point: "
                          "nothing was measured\n";
  if (o.target.is_cuda() && o.opt_level > 1 && o.random_schedule_seed < 0 && !measures_on_gpu(o)) {
    if (o.progress_stream)
      *o.progress_stream << "tlmc: note: -O" << o.opt_level << " for " << o.target.name << ": "
                         << why_not_measured_on_gpu(o)
                         << "; each kernel's schedule is the analytic model's best estimate of "
                            "the CUDA language model's proposals and "
                         << tune::estimated_candidates(o.opt_level)
                         << " points of the spaces, the -O0 point among them: nothing was "
                            "measured or recorded\n";
    return o.opt_level;
  }
  if (o.opt_level < 2 || o.random_schedule_seed >= 0) return o.opt_level;
  std::string missing;
  if (!o.target.runs_here)
    missing = "this machine cannot run code for target " + o.target.name;
  else if (o.tuning_db.empty())
    missing = "there is no tuning database (--tuning-db)";
  if (missing.empty()) return o.opt_level;
  if (o.opt_level == 3)
    throw Diagnostic({}, "-O3 measures schedules on this machine, but " + missing +
                             "; use -O1, or tune on such a machine");
  if (o.progress_stream)
    *o.progress_stream << "tlmc: note: -O2 measures schedules on this machine, but " << missing
                       << ": compiling at -O1 (the language model's schedules, unmeasured)\n";
  return 1;
}

}  // namespace

ir::Graph read_model(const CompileOptions& o) {
  const std::string& path = o.model_path;
  if (ends_with(path, ".onnx"))
    return frontend::read_onnx_model(path, frontend::OnnxOptions{o.input_shapes});
  if (!ends_with(path, ".yaml") && !ends_with(path, ".yml"))
    throw Diagnostic({path}, "unknown model type: expected a .yaml graph or an .onnx file");
  return frontend::read_yaml_model(path);
}

// The shared cache's size for the cold-weights rule (tune/shared_cache_probe.h): as the
// tuning database recorded it for this target, else measured now, and recorded when -O3
// writes the database (records imported from another database come without it); 0 when
// there is no database, where no record the rule would select exists.
int64_t shared_cache_bytes(const CompileOptions& o, scheduler::TuningDb& db) {
  const bool tuning = o.opt_level >= 2;
  if (o.tuning_db.empty() || (!tuning && !fs::exists(o.tuning_db))) return 0;
  const std::string key = "shared_cache " + o.target.descriptor();
  if (const std::optional<std::string> v = db.fact(key)) {
    try {
      return std::stoll(*v);
    } catch (const std::exception&) {
      return 0;
    }
  }
  const int64_t bytes = tune::measure_shared_cache_bytes(o.target.cores);
  if (tuning) db.set_fact(key, std::to_string(bytes));
  return bytes;
}

// Whether every run of the model finds its weights in memory rather than in a cache, so
// that kernels are measured with them flushed (ir::Target::cold_weights): they exceed the
// cores' private caches and half the shared cache (0 when not known). In a tuned ResNet-50
// (100 MB of weights) the layers with the largest weights ran 1.5 to 3.4 times slower than
// their warm measurements; MobileNetV2 (14 MB), tuned cold on a machine whose shared cache
// held 64 MB, ran slower at -O3 than at -O0.
bool weights_leave_the_caches(const ir::Graph& g, const CompileOptions& o,
                              scheduler::TuningDb& db) {
  size_t bytes = 0;
  for (const ir::Tensor& t : g.tensors)
    if (t.kind == ir::TensorKind::Weight) bytes += t.type.bytes();
  if (bytes <= static_cast<size_t>(o.target.l2_bytes) * static_cast<size_t>(o.target.cores))
    return false;
  return bytes > static_cast<size_t>(shared_cache_bytes(o, db) / 2);
}

namespace {

// The options as the build uses them: a CUDA target's layout, refusals of what the target
// cannot do, and the level it works at (effective_level).
CompileOptions checked_options(const CompileOptions& options) {
  CompileOptions o = options;
  // A CUDA target keeps the model's layout between kernels: channels-last and blocked are
  // CPU vector layouts (a GPU's threads read along whichever axis the schedule binds).
  if (o.target.is_cuda()) {
    if (o.activation_layout == ActivationLayout::ChannelsLast ||
        o.activation_layout == ActivationLayout::Blocked)
      throw Diagnostic({},
                       "--activation-layout channels-last and blocked are CPU layouts: a "
                       "CUDA target keeps the model's layout (--activation-layout model "
                       "or auto)");
    o.activation_layout = ActivationLayout::Model;
    if (o.profile && !o.target.runs_here)
      throw Diagnostic({}, "--profile times the kernels on a GPU of the target's SM (sm_" +
                               std::to_string(o.target.gpu.sm) + "), and " + no_gpu_for(o.target) +
                               "; --check runs the kernels in the CPU emulator");
  }
  if (o.bf16 && o.target.is_cuda())
    throw Diagnostic({},
                     "--precision bf16 is for CPU targets: a CUDA target computes in "
                     "float32 (use --precision fp32)");
  if (o.bf16 && o.target.bf16 == ir::Bf16Unit::None)
    throw Diagnostic({}, "--precision bf16 needs a CPU with AVX512_BF16 or AMX, and target " +
                             o.target.name +
                             " has neither: name one that has them (--target x86-64-avx512-bf16 "
                             "or x86-64-amx), or use --precision fp32; tlmc does not emulate "
                             "bf16 products");
  o.opt_level = effective_level(o);
  return o;
}

// The tuning database, opened once for the build: created if need be at -O2 and -O3 for a
// CPU target (measured records, the shared cache's size, in-model times) or a CUDA target
// measured on a GPU here (measured records); at the other levels nothing writes it.
scheduler::TuningDb open_tuning_db(const CompileOptions& o) {
  const bool writes =
      !o.tuning_db.empty() && o.opt_level >= 2 && (!o.target.is_cuda() || measures_on_gpu(o));
  return scheduler::TuningDb::open(o.tuning_db,
                                   writes ? scheduler::DbAccess::Write : scheduler::DbAccess::Read);
}

}  // namespace

CompiledModel compile_model(const CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CompileOptions o = checked_options(options);  // and the target's cold_weights, below
  CompiledModel m;
  m.bf16 = o.bf16;
  {
    PassTimer t(o, "read");
    m.graph = read_model(o);
  }
  m.inputs_read = m.graph.source_files;
  if (!o.name.empty()) {
    if (!frontend::is_c_identifier(o.name))
      throw Diagnostic({}, "--name '" + o.name + "' is not a C identifier");
    m.graph.name = o.name;
  }
  // What is known at compile time is computed now (BatchNormalization into Conv weights,
  // constant subexpressions into weights). m.graph stays as read: --check compares with it.
  ir::Graph graph;
  {
    PassTimer t(o, "fold constants");
    graph = frontend::fold_constants(m.graph);
  }
  // After folding, which would turn a weight's conversion back into a float32 weight.
  if (o.bf16) {
    PassTimer t(o, "reduced precision");
    graph = frontend::demote_products_to_bf16(graph, o.precision);
    m.bf16_graph = graph;
  }
  std::ostream* dump = o.dump_stream;
  if (dump && wants(o, "graph")) *dump << ir::graph_str(graph);
  scheduler::TuningDb db = open_tuning_db(o);
  // Weights leave a CPU's caches; a GPU's kernels are timed as they run back to back (the
  // weights wherever the previous run left them, in L2 where they fit).
  if (!o.target.is_cuda()) o.target.cold_weights = weights_leave_the_caches(graph, o, db);

  SplitModel split;
  {
    PassTimer t(o, "layout plans, partition and lower");
    split = split_model(graph, o.target, o.activation_layout, o.log_stream);
  }
  const BuildChoice choice = choose_build(o, m.graph, graph, split, db);
  generate(o, split.plans[choice.plan], split.distinct, choice.kernels, choice.schedules, m);
  // The CUDA text as written, compiled for the target's SM as --emit lib's nvcc will build it:
  // a kernel over the descriptor's limits is never emitted.
  if (o.target.is_cuda()) {
    PassTimer t(o, "check the CUDA kernels (NVRTC)");
    check_cuda_kernels(o.target, m, o.progress_stream);
    for (const ir::KernelResources& k : m.cuda_kernels)
      if (k.spill_stores > 0 && o.progress_stream)
        *o.progress_stream << "tlmc: note: kernel " << k.name << " spills " << k.spill_stores
                           << " bytes of registers to local memory\n";
    if (dump && wants(o, "resources")) print_cuda_kernels(*dump, o.target, m);
  }
  if (o.progress_stream && o.opt_level >= 1 && o.random_schedule_seed < 0) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char line[200];
    std::snprintf(line, sizeof line, "tlmc: -O%d: %zu kernels (%d from tuning records) in %.1f s\n",
                  o.opt_level, choice.schedules.size(), choice.from_records, seconds);
    *o.progress_stream << line;
  }
  return m;
}

std::string gpu_cannot_run(const ir::Target& target) {
  if (!target.is_cuda() || !target.runs_here) return "";
  const int nvrtc = toolchain::nvrtc_major_version();
  const int driver = ir::cuda_driver_version();
  if (nvrtc == 0) return "NVRTC, which builds the kernels measured there, is not installed";
  if (toolchain::find_nvcc().empty())
    return "nvcc, which builds the libraries --check and --profile run there, is not installed";
  if (driver / 1000 < nvrtc)
    return "its driver supports CUDA " + std::to_string(driver / 1000) + "." +
           std::to_string(driver % 1000 / 10) + ", older than this toolkit's (NVRTC " +
           std::to_string(nvrtc) + "); update the driver";
  return "";
}

}  // namespace tlmc::driver
