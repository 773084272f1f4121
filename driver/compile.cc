#include "driver/compile.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <sstream>

#include "codegen/emit_cuda.h"
#include "driver/cuda_kernel_check.h"
#include "driver/layout_plans.h"
#include "driver/output_files.h"
#include "driver/profile.h"
#include "frontend/fold_constants.h"
#include "frontend/model_name.h"
#include "frontend/onnx_reader.h"
#include "frontend/reduced_precision.h"
#include "frontend/yaml_reader.h"
#include "ir/cuda_device.h"
#include "ir/lower.h"
#include "ir/te.h"
#include "ir/te_text.h"
#include "scheduler/channels_last_activations.h"
#include "scheduler/decision.h"
#include "scheduler/lower_schedule.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"
#include "scheduler/tile_product.h"
#include "scheduler/tuning_db.h"
#include "toolchain/assemble_in_process.h"
#include "toolchain/cc.h"
#include "toolchain/cuda_toolkit.h"
#include "toolchain/nvrtc.h"
#include "tune/confirm_in_model.h"
#include "tune/measure_task.h"
#include "tune/schedule_choice.h"
#include "tune/shared_cache_probe.h"
#include "tune/tuner.h"

namespace tlmc::driver {

namespace fs = std::filesystem;

namespace {

bool wants(const CompileOptions& o, const std::string& what) {
  for (const std::string& d : o.dumps)
    if (d == what) return true;
  return false;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Times one step of the pipeline for -v.
class PassTimer {
 public:
  PassTimer(const CompileOptions& o, const char* name)
      : o_(o), name_(name), t0_(std::chrono::steady_clock::now()) {}
  ~PassTimer() {
    if (!o_.log_stream) return;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
    *o_.log_stream << "tlmc: " << name_ << ": " << ms << " ms\n";
  }

 private:
  const CompileOptions& o_;
  const char* name_;
  std::chrono::steady_clock::time_point t0_;
};

using tune::KernelCandidates;
using tune::KernelRecords;

// What the schedule choice (tune/schedule_choice.h) takes from the build's options.
tune::ChoiceOptions choice_options(const CompileOptions& o) {
  return tune::ChoiceOptions{o.target, o.opt_level, o.random_schedule_seed, o.lm_model,
                             o.log_stream};
}

// Each distinct subgraph's tuning records (none when a random schedule is drawn): read
// once, for the choice of the layout plan and then of its kernels' schedules.
std::vector<std::optional<tune::KernelRecords>> all_kernel_records(
    const CompileOptions& o, const scheduler::TuningDb& db, const std::vector<Distinct>& distinct) {
  std::vector<std::optional<tune::KernelRecords>> records(distinct.size());
  if (o.random_schedule_seed >= 0) return records;
  for (size_t k = 0; k < distinct.size(); ++k)
    records[k] = tune::kernel_records(choice_options(o), db, distinct[k].lowered.program);
  return records;
}

// A kernel's schedule (tune::choose_schedule).
std::vector<scheduler::Decision> choose_schedule(const CompileOptions& o, const Distinct& d,
                                                 const std::optional<tune::KernelRecords>& records,
                                                 const scheduler::TuningDb& db, int* from_records) {
  return tune::choose_schedule(choice_options(o), d.key, d.lowered.program, records, db,
                               from_records);
}

// Default budgets: measurements per distinct subgraph at -O2 (the language model's
// proposals) and at -O3 (the evolutionary search).
constexpr int64_t kModelTrialsPerSubgraph = 32;
constexpr int64_t kSearchTrialsPerSubgraph = 64;

// Whether the graph has a convolution of group 1: -O0's reason to go channels-last. At -O0
// that layout ran ResNet-50 2.8 times and MobileNetV2 3.0 times faster end to end than the
// model's, and W3 and W4 alone (with their conversions) 1.1 times; a depthwise convolution
// alone (W6) 4 times slower, its conversions costing more than it saves
// (docs/design-notes.md).
bool has_dense_convolution(const ir::Graph& g) {
  return std::any_of(g.nodes.begin(), g.nodes.end(),
                     [](const ir::Node& n) { return n.op == "Conv" && n.attr_int("group") == 1; });
}

// Plan p's latency by the tuning records: each subgraph's fastest record alone, times its
// occurrences, summed; -1 when a subgraph of the plan has no record.
double estimated_seconds(size_t p, const std::vector<Distinct>& distinct,
                         const std::vector<std::optional<KernelRecords>>& records) {
  double latency = 0;
  for (size_t k = 0; k < distinct.size() && latency >= 0; ++k) {
    if (distinct[k].occurrences[p] == 0) continue;
    latency = records[k] ? latency + distinct[k].occurrences[p] * records[k]->best_seconds : -1;
  }
  return latency;
}

// The tuning database's fact that holds a plan's latency as -O3 measured it in the model
// (time_plans): named by the target, the library's threads and the plan's kernels in call
// order. Its value is "SECONDS ESTIMATE", the estimate (estimated_seconds) of when it was
// measured: once the records change, the measurement lapses.
std::string plan_fact_key(const CompileOptions& o, const LayoutPlan& plan,
                          const std::vector<Distinct>& distinct) {
  std::string calls;
  for (const Occurrence& c : plan.occurrences)
    calls += distinct[static_cast<size_t>(c.distinct)].key + " ";
  return "plan_seconds " + o.target.descriptor() + " threads=" + std::to_string(o.threads) + " " +
         ir::text_key(calls);
}

std::optional<double> measured_seconds(const CompileOptions& o, const scheduler::TuningDb& db,
                                       const LayoutPlan& plan,
                                       const std::vector<Distinct>& distinct, double estimate) {
  const std::optional<std::string> fact = db.fact(plan_fact_key(o, plan, distinct));
  if (!fact) return std::nullopt;
  std::istringstream in(*fact);
  double seconds = 0;
  double measured_estimate = 0;
  if (!(in >> seconds >> measured_estimate) || seconds <= 0) return std::nullopt;
  if (std::abs(measured_estimate - estimate) > 1e-9 * estimate) return std::nullopt;
  return seconds;
}

// The layout plan the model is built in: the one of least latency among the plans whose every
// subgraph has a record, as -O3 measured them in the model when every such plan has a
// measurement that has not lapsed, else by the records (estimated_seconds); else `fallback`,
// -O0's choice. A random schedule draws it.
size_t choose_plan(const CompileOptions& o, const std::vector<LayoutPlan>& plans,
                   const std::vector<Distinct>& distinct,
                   const std::vector<std::optional<KernelRecords>>& records,
                   const scheduler::TuningDb& db, size_t fallback) {
  if (o.random_schedule_seed >= 0)
    return static_cast<size_t>(o.random_schedule_seed) % plans.size();
  std::vector<double> estimate(plans.size());
  std::vector<double> measured(plans.size(), -1);
  bool all_measured = true;
  for (size_t p = 0; p < plans.size(); ++p) {
    estimate[p] = estimated_seconds(p, distinct, records);
    if (estimate[p] < 0) continue;
    const std::optional<double> m = measured_seconds(o, db, plans[p], distinct, estimate[p]);
    measured[p] = m ? *m : -1;
    all_measured = all_measured && m;
  }
  const std::vector<double>& latency = all_measured ? measured : estimate;
  size_t chosen = fallback;
  double chosen_latency = -1;
  for (size_t p = 0; p < plans.size(); ++p)
    if (latency[p] >= 0 && (chosen_latency < 0 || latency[p] < chosen_latency)) {
      chosen = p;
      chosen_latency = latency[p];
    }
  if (o.log_stream && plans.size() > 1)
    *o.log_stream << "tlmc: activation layout: " << plans[chosen].name
                  << (chosen_latency < 0 ? " (no complete tuning records)"
                      : all_measured     ? " (measured in the model)"
                                         : " (tuning records)")
                  << "\n";
  return chosen;
}

// A plan with each chain in the layout whose subgraphs serving it (those whose first node
// in a chain is of it, conversions included) take least time by the records, among the
// plans of one layout throughout whose subgraphs serving the chain all have a record: the
// depthwise chains of a network may run fastest channels-last and its dense ones blocked.
// Added to `split` (with its records) when the chains' choices differ; its subgraphs are
// those of the plans it takes its chains from.
void add_mixed_plan(const CompileOptions& o, const ir::Graph& graph, const scheduler::TuningDb& db,
                    SplitModel& split, std::vector<std::optional<KernelRecords>>& records) {
  const std::vector<int> chains = scheduler::activation_chains(graph);
  const size_t n_chains = scheduler::chain_count(chains);
  if (n_chains < 2 || split.plans.size() < 2) return;
  std::vector<int> best_plan(n_chains, -1);
  std::vector<double> best_cost(n_chains, 0);
  for (size_t p = 0; p < split.plans.size(); ++p) {
    const LayoutPlan& plan = split.plans[p];
    std::vector<double> cost(n_chains, 0);
    std::vector<bool> complete(n_chains, true);
    for (const Occurrence& c : plan.occurrences) {
      int chain = -1;
      for (int node : c.nodes)
        if (chain < 0) chain = plan.chain_of_node.at(static_cast<size_t>(node));
      if (chain < 0) continue;
      const std::optional<KernelRecords>& r = records[static_cast<size_t>(c.distinct)];
      if (r)
        cost[static_cast<size_t>(chain)] += r->best_seconds;
      else
        complete[static_cast<size_t>(chain)] = false;
    }
    for (size_t c = 0; c < cost.size(); ++c)
      if (complete[c] && (best_plan[c] < 0 || cost[c] < best_cost[c])) {
        best_plan[c] = static_cast<int>(p);
        best_cost[c] = cost[c];
      }
  }
  if (std::any_of(best_plan.begin(), best_plan.end(), [](int p) { return p < 0; })) return;
  std::vector<ir::ChannelLayout> layouts;
  for (int p : best_plan) layouts.push_back(split.plans[static_cast<size_t>(p)].layout);
  // (A plan and its twin of fused conversions are one layout.)
  if (std::all_of(layouts.begin(), layouts.end(), [&](const ir::ChannelLayout& l) {
        return l.last == layouts[0].last && l.block == layouts[0].block;
      }))
    return;
  std::optional<scheduler::LayoutRewrite> mixed = scheduler::activations_in(graph, chains, layouts);
  if (!mixed) return;
  const size_t known = split.distinct.size();
  add_plan(
      split,
      LayoutPlan{
          "mixed", {}, std::move(mixed->graph), std::move(mixed->chain_of_node), {}, {}, false},
      o.target);
  for (size_t k = known; k < split.distinct.size(); ++k)
    records.push_back(
        tune::kernel_records(choice_options(o), db, split.distinct[k].lowered.program));
}

// -O2, -O3: the distinct subgraphs (of layout plan `only_plan`, or all of them when it is
// -1; at -O2 those without a record) are tasks measured on this machine; the records land in the
// tuning database, where choose_schedule finds the best. -O2 measures the language model's
// proposals, -O3 runs the evolutionary search seeded by them.
void tune(const CompileOptions& o, const std::vector<LayoutPlan>& plans,
          const std::vector<Distinct>& distinct, int only_plan, scheduler::TuningDb& db) {
  const bool model_search = o.opt_level == 2;
  std::vector<tune::TuneTask> tasks;
  for (size_t i = 0; i < distinct.size(); ++i) {
    const Distinct& d = distinct[i];
    if (only_plan >= 0 && d.occurrences[static_cast<size_t>(only_plan)] == 0) continue;
    if (!o.tune_only.empty() &&
        std::find(o.tune_only.begin(), o.tune_only.end(), d.key) == o.tune_only.end())
      continue;
    // -O2 uses a record as it is (design.md): a subgraph with one is not measured again.
    if (model_search && tune::kernel_records(choice_options(o), db, d.lowered.program)) continue;
    const int times = only_plan >= 0
                          ? d.occurrences[static_cast<size_t>(only_plan)]
                          : *std::max_element(d.occurrences.begin(), d.occurrences.end());
    tasks.push_back(tune::TuneTask{
        tune::make_measure_task(plans[static_cast<size_t>(d.plan)].graph, d.nodes, d.lowered, 1),
        times, plans.size() > 1 && only_plan < 0 ? d.occurrences : std::vector<int>{}});
  }
  if (tasks.empty()) return;
  tune::TuneOptions options;
  options.trials = o.trials > 0
                       ? o.trials
                       : (model_search ? kModelTrialsPerSubgraph : kSearchTrialsPerSubgraph) *
                             static_cast<int64_t>(tasks.size());
  options.measure.threads = o.target.cores;
  options.measure.cold_weights = o.target.cold_weights;
  options.jobs = o.jobs;
  options.early_stopping = model_search ? 0 : o.early_stopping;
  using Search = CompileOptions::Search;
  options.search = model_search                 ? tune::SearchKind::Model
                   : o.search == Search::Random ? tune::SearchKind::Random
                                                : tune::SearchKind::Evolutionary;
  // Without a model, the evolutionary search starts from uniform samples.
  if (model_search || o.search == Search::Evolutionary)
    options.model_search.model = &tune::language_model(o.lm_model, o.target);
  std::ostringstream quiet;
  std::ostream& progress = o.progress_stream ? *o.progress_stream : quiet;
  const std::vector<tune::TaskReport> reports =
      tune::tune_tasks(tasks, o.target, db, options, progress, o.progress_live);
  tune::print_tune_report(progress, reports);
}

// A CUDA target's -O2 and -O3 measure on the GPU of this machine when it is of the target's
// SM (ir::parse_target then takes its limits and says it runs here) and the measurements
// have a tuning database to land in; otherwise the analytic model ranks the candidates.
bool measures_on_gpu(const CompileOptions& o) {
  return o.target.is_cuda() && o.target.runs_here && !o.tuning_db.empty();
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

// The kernels of a layout plan: its distinct subgraphs, numbered as they first occur.
struct PlanKernels {
  std::map<int, int> kernel_of;  // distinct subgraph -> kernel
  std::vector<int> distinct_of;  // kernel -> distinct subgraph
};

PlanKernels plan_kernels(const LayoutPlan& plan) {
  PlanKernels k;
  for (const Occurrence& c : plan.occurrences)
    k.kernel_of.emplace(c.distinct, static_cast<int>(k.kernel_of.size()));
  k.distinct_of.resize(k.kernel_of.size());
  for (const auto& [d, i] : k.kernel_of) k.distinct_of[static_cast<size_t>(i)] = d;
  return k;
}

// Lowers each kernel of `plan` with its schedule and generates the model's C into `m`.
void generate(const CompileOptions& o, const LayoutPlan& plan,
              const std::vector<Distinct>& distinct, const PlanKernels& plan_kernels,
              const std::vector<std::vector<scheduler::Decision>>& schedules, CompiledModel& m) {
  std::ostream* dump = o.dump_stream;
  std::vector<codegen::KernelInfo> kernels;
  int unit_kernels = 0, widened_kernels = 0, float_kernels = 0;  // by how they compute
  {
    PassTimer t(o, "lower schedules");
    for (size_t k = 0; k < plan_kernels.distinct_of.size(); ++k) {
      const Distinct& d = distinct[static_cast<size_t>(plan_kernels.distinct_of[k])];
      const std::vector<scheduler::Decision>& schedule = schedules.at(k);
      const ir::TeProgram& program = d.lowered.program;
      const scheduler::ScheduleState state = scheduler::apply_schedule(program, schedule);
      ir::LoopProgram loops =
          scheduler::lower_schedule(state, m.graph.name + "_k" + std::to_string(k));
      if (dump && wants(o, "te"))
        *dump << "# kernel " << k << " (workload " << ir::workload_key(program) << ")\n"
              << ir::te_str(program);
      if (dump && wants(o, "sketch")) {
        for (const scheduler::Sketch& sketch : scheduler::generate_sketches(program, o.target)) {
          *dump << "# kernel " << k << " sketch " << sketch.name() << "\n";
          for (const scheduler::Space& s : sketch.spaces())
            *dump << scheduler::space_kind_name(s.kind) << " " << s.stage << " " << s.axis << "\n";
        }
      }
      const scheduler::KernelPrecision precision = scheduler::kernel_precision(state, o.target);
      if (dump && wants(o, "precision"))
        *dump << "# kernel " << k << " (workload " << ir::workload_key(program)
              << "): " << precision.text << "\n";
      (precision.by_unit > 0   ? unit_kernels
       : precision.widened > 0 ? widened_kernels
                               : float_kernels) += 1;
      if (dump && wants(o, "loops"))
        *dump << "# kernel " << k << " schedule:\n"
              << scheduler::schedule_str(schedule) << ir::loop_str(loops);
      kernels.push_back(codegen::KernelInfo{std::move(loops), ir::workload_key(program),
                                            scheduler::schedule_str(schedule),
                                            tune::program_flops(program)});
    }
  }
  // Nothing about a bf16 build (or a bfloat16 model's) is silent: how many kernels the unit
  // computes.
  const char* unit = o.target.bf16 == ir::Bf16Unit::Amx ? "AMX tiles"
                     : o.target.bf16 == ir::Bf16Unit::Avx512Bf16
                         ? "vdpbf16ps"
                         : "a bf16 unit (the target has none)";
  if ((o.bf16 || unit_kernels + widened_kernels > 0) && o.progress_stream)
    *o.progress_stream << "tlmc: bf16: " << unit_kernels << " of " << kernels.size()
                       << " kernels compute their products by " << unit << ", " << widened_kernels
                       << " by loops widening bfloat16, " << float_kernels
                       << " in float32 alone (--dump precision lists them, with the reasons)\n";
  std::vector<codegen::CompiledSubgraph> subgraphs;
  for (const Occurrence& c : plan.occurrences)
    subgraphs.push_back(
        codegen::CompiledSubgraph{c.nodes, plan_kernels.kernel_of.at(c.distinct), c.params});
  PassTimer t(o, "plan and generate C");
  m.plan =
      codegen::plan_model(plan.graph, plan.partition.storage_of, subgraphs, std::move(kernels));
  m.files = codegen::emit_c(m.plan, codegen::CodegenOptions{o.target, o.threads, o.profile});
  m.profiled = o.profile;
}

// Each timed build of time_in_model runs at least this long (and 10 times).
constexpr double kInModelSeconds = 0.5;

// -O3's last step (confirm_in_model.h): the candidates of the plan's kernels are timed in
// builds of the model (`model_graph`: as read, for its inputs), and recorded.
void time_in_model(const CompileOptions& o, const ir::Graph& model_graph, const LayoutPlan& plan,
                   const std::vector<Distinct>& distinct, const PlanKernels& plan_kernels,
                   const std::vector<std::optional<KernelRecords>>& records,
                   scheduler::TuningDb& db) {
  std::vector<KernelCandidates> kernels;
  for (int i : plan_kernels.distinct_of) {
    const std::optional<KernelRecords>& r = records[static_cast<size_t>(i)];
    KernelCandidates c = r ? r->candidates : KernelCandidates{};
    if (!r) {  // no successful record: -O0's schedule alone
      c.workload_key = distinct[static_cast<size_t>(i)].key;
      tune::add_default_candidate(o.target, distinct[static_cast<size_t>(i)].lowered.program, c);
    }
    kernels.push_back(std::move(c));
  }
  CompileOptions timed = o;
  timed.profile = true;
  timed.dump_stream = nullptr;
  timed.log_stream = nullptr;
  const tune::RunVariant run = [&](const std::vector<size_t>& choice) {
    std::vector<std::vector<scheduler::Decision>> schedules;
    for (size_t k = 0; k < kernels.size(); ++k)
      schedules.push_back(kernels[k].schedules.at(choice[k]));
    CompiledModel build;
    build.graph = model_graph;
    generate(timed, plan, distinct, plan_kernels, schedules, build);
    const ModelProfile p =
        profile_model(build, o.target, CCompiler::InProcess, kInModelSeconds, false);
    tune::VariantTimes times{p.run_seconds, std::vector<double>(kernels.size(), 0)};
    std::vector<int> calls(kernels.size(), 0);
    for (const CallProfile& c : p.calls) {
      times.kernel_seconds.at(static_cast<size_t>(c.kernel)) += c.seconds;
      ++calls[static_cast<size_t>(c.kernel)];
    }
    for (size_t k = 0; k < kernels.size(); ++k)
      if (calls[k] > 0) times.kernel_seconds[k] /= calls[k];
    return times;
  };
  const auto t0 = std::chrono::steady_clock::now();
  const tune::InModelReport r =
      tune::confirm_in_model(kernels, run, db, o.target.descriptor() + tune::kInModelContext);
  if (!r.measured || !o.progress_stream) return;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char line[300];
  std::snprintf(line, sizeof line,
                "tlmc: timed in the model (%d builds, %.0f s): a run takes %.3f ms with the "
                "chosen schedules, %.3f ms with the fastest records, %.3f ms with -O0's\n",
                r.builds, seconds, r.chosen_run * 1e3, r.records_run * 1e3, r.default_run * 1e3);
  *o.progress_stream << line;
}

// Each timed build of time_plans runs at least this long, in each of kPlanRounds rounds.
constexpr double kPlanSeconds = 0.3;
constexpr int kPlanRounds = 3;

// -O3, before the plan is chosen: every plan whose subgraphs all have a record (two at least)
// is built with the schedules a build would take and timed end to end, conversions included,
// the plans alternating round by round; each one's median lands in the tuning database as a
// fact (plan_fact_key), which choose_plan prefers to the records' sum. The sum leaves out what
// lies between the kernels (a conversion's cache misses, the threads' wake-ups), which
// differs from plan to plan.
void time_plans(const CompileOptions& o, const ir::Graph& model_graph, const SplitModel& split,
                const std::vector<std::optional<KernelRecords>>& records, scheduler::TuningDb& db) {
  std::vector<size_t> complete;
  std::vector<double> estimates;  // of the complete plans, kept with their measurements
  for (size_t p = 0; p < split.plans.size(); ++p) {
    const double estimate = estimated_seconds(p, split.distinct, records);
    if (estimate < 0) continue;
    complete.push_back(p);
    estimates.push_back(estimate);
  }
  if (complete.size() < 2) return;
  const auto t0 = std::chrono::steady_clock::now();
  CompileOptions timed = o;
  timed.profile = true;
  timed.dump_stream = nullptr;
  timed.log_stream = nullptr;
  std::vector<CompiledModel> builds;
  for (size_t p : complete) {
    const LayoutPlan& plan = split.plans[p];
    const PlanKernels kernels = plan_kernels(plan);
    std::vector<std::vector<scheduler::Decision>> schedules;
    int from_records = 0;
    for (int i : kernels.distinct_of)
      schedules.push_back(choose_schedule(timed, split.distinct[static_cast<size_t>(i)],
                                          records[static_cast<size_t>(i)], db, &from_records));
    builds.emplace_back();
    builds.back().graph = model_graph;
    generate(timed, plan, split.distinct, kernels, schedules, builds.back());
  }
  std::vector<std::vector<double>> seconds(complete.size());
  for (int round = 0; round < kPlanRounds; ++round)
    for (size_t b = 0; b < builds.size(); ++b)
      seconds[b].push_back(
          profile_model(builds[b], o.target, CCompiler::InProcess, kPlanSeconds, false)
              .run_seconds);
  std::string line = "tlmc: layout plans timed in the model:";
  for (size_t b = 0; b < builds.size(); ++b) {
    std::vector<double>& s = seconds[b];
    std::sort(s.begin(), s.end());
    const double median = s[s.size() / 2];
    const LayoutPlan& plan = split.plans[complete[b]];
    char value[64];
    std::snprintf(value, sizeof value, "%.17g %.17g", median, estimates[b]);
    db.set_fact(plan_fact_key(o, plan, split.distinct), value);
    char part[120];
    std::snprintf(part, sizeof part, "%s %s %.4g ms", b == 0 ? "" : ",", plan.name.c_str(),
                  median * 1e3);
    line += part;
  }
  if (!o.progress_stream) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  char tail[40];
  std::snprintf(tail, sizeof tail, " (%.0f s)\n", elapsed);
  *o.progress_stream << line << tail;
}

}  // namespace

CompiledModel compile_model(const CompileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  CompileOptions o = options;  // with the level and the target's cold_weights decided below
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
  // The tuning database, opened once for the build: created if need be at -O2 and -O3 for
  // a CPU target (measured records, the shared cache's size, in-model times) or a CUDA
  // target measured on a GPU here (measured records); at the other levels nothing writes it.
  scheduler::TuningDb db =
      scheduler::TuningDb::open(o.tuning_db, !o.tuning_db.empty() && o.opt_level >= 2 &&
                                                     (!o.target.is_cuda() || measures_on_gpu(o))
                                                 ? scheduler::DbAccess::Write
                                                 : scheduler::DbAccess::Read);
  // Weights leave a CPU's caches; a GPU's kernels are timed as they run back to back (the
  // weights wherever the previous run left them, in L2 where they fit).
  if (!o.target.is_cuda()) o.target.cold_weights = weights_leave_the_caches(graph, o, db);

  SplitModel split;
  {
    PassTimer t(o, "layout plans, partition and lower");
    split = split_model(graph, o.target, o.activation_layout, o.log_stream);
  }
  std::vector<LayoutPlan>& plans = split.plans;
  std::vector<Distinct>& distinct = split.distinct;
  // Without complete records, -O0's rule: channels-last when there is a dense convolution,
  // and then (or in the one layout asked for) the twin computing its conversions in the
  // dense convolutions that read them, where there is one (it follows its plan; measured
  // faster, docs/design-notes.md).
  const auto last =
      std::find_if(plans.begin(), plans.end(), [](const LayoutPlan& p) { return p.layout.last; });
  size_t rule = last != plans.end() && has_dense_convolution(graph)
                    ? static_cast<size_t>(last - plans.begin())
                    : 0;
  if (rule + 1 < plans.size() && plans[rule + 1].fuse_conversions) ++rule;
  // -O2, -O3: measure on this machine and record, before the schedules are chosen from
  // records. -O2 tunes the rule's layout plan alone (half the subgraphs of a convolutional
  // network), -O3 every plan, to build the faster.
  for (const std::string& key : o.tune_only)
    if (std::none_of(distinct.begin(), distinct.end(),
                     [&](const Distinct& d) { return d.key == key; }))
      throw Diagnostic({o.model_path}, "--tune-only " + key +
                                           ": no subgraph of the model has this workload key "
                                           "(--dump te lists them)");
  // Measuring needs the target here: without a GPU of its SM, a CUDA target's kernels are
  // ranked by estimate instead (estimated_schedule), and nothing is timed. A CUDA target has
  // one layout plan, and its -O3 times no plan or candidate in the model (the whole
  // model's CUDA library is not run by the compiler).
  const bool measures = (!o.target.is_cuda() || measures_on_gpu(o)) && o.random_schedule_seed < 0;
  const bool times_in_model = measures && !o.target.is_cuda();
  if (o.opt_level >= 2 && measures) {
    PassTimer t(o, "tune");
    tune(o, plans, distinct, o.opt_level == 2 ? static_cast<int>(rule) : -1, db);
  }
  std::vector<std::optional<KernelRecords>> records = all_kernel_records(o, db, distinct);
  if (o.random_schedule_seed < 0) add_mixed_plan(o, graph, db, split, records);
  // -O3: the plans whose every subgraph has a record are timed whole, in the model.
  if (o.opt_level >= 3 && times_in_model) {
    PassTimer t(o, "time the layout plans");
    time_plans(o, m.graph, split, records, db);
  }
  const LayoutPlan& plan = plans[choose_plan(o, plans, distinct, records, db, rule)];
  if (dump && wants(o, "graph") && plan.name != kModelLayout) *dump << ir::graph_str(plan.graph);
  const PlanKernels kernels = plan_kernels(plan);
  // -O3, once the plan is chosen (its kernels run together): their candidates are timed in
  // the model, and those times choose the schedules below.
  if (o.opt_level >= 3 && times_in_model) {
    PassTimer t(o, "time in the model");
    time_in_model(o, m.graph, plan, distinct, kernels, records, db);
  }
  std::vector<std::vector<scheduler::Decision>> schedules;
  int from_records = 0;
  {
    PassTimer t(o, "schedule");
    for (int i : kernels.distinct_of)
      schedules.push_back(choose_schedule(o, distinct[static_cast<size_t>(i)],
                                          records[static_cast<size_t>(i)], db, &from_records));
  }
  if (o.log_stream && !o.tuning_db.empty())
    *o.log_stream << "tlmc: " << from_records << " of " << schedules.size()
                  << " kernels scheduled from tuning records (" << o.tuning_db << ")\n";
  generate(o, plan, distinct, kernels, schedules, m);
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
                  o.opt_level, schedules.size(), from_records, seconds);
    *o.progress_stream << line;
  }
  return m;
}

namespace {

std::vector<std::string> build_objects(const CompiledModel& m, const fs::path& dir,
                                       const ir::Target& target, bool pic, CCompiler cc) {
  const std::string& n = m.plan.name;
  if (target.is_cuda()) {
    // The device code by nvcc; the weights' assembler file by the host's C compiler.
    std::vector<std::string> objects = {
        toolchain::compile_cuda_object(dir.string(), n + ".cu", target, pic)};
    for (const std::string& o :
         toolchain::compile_objects(dir.string(), {n + "_weights.S"}, target, pic))
      objects.push_back(o);
    return objects;
  }
  const std::vector<std::string> sources = {n + ".c", n + "_runtime.c", n + "_weights.S"};
  if (cc == CCompiler::System)
    return toolchain::compile_objects(dir.string(), sources, target, pic);
  return toolchain::compile_objects_in_process(dir.string(), sources, target, pic);
}

}  // namespace

std::vector<std::string> write_output(const CompiledModel& m, EmitKind kind,
                                      const std::string& out_path, const ir::Target& target,
                                      CCompiler cc) {
  const std::string& n = m.plan.name;
  const fs::path out(out_path);
  std::vector<std::pair<fs::path, fs::path>> moves;
  switch (kind) {
    case EmitKind::Source: {
      std::error_code ec;
      fs::create_directories(out, ec);
      if (!fs::is_directory(out)) throw Diagnostic({out_path}, "cannot create the output folder");
      StagingDir stage(out);
      write_files(m.files, stage.path());
      for (const codegen::GeneratedFile& f : m.files)
        moves.emplace_back(stage.path() / f.name, out / f.name);
      commit(moves);
      break;
    }
    case EmitKind::Header: {
      const fs::path target_file = ends_with(out_path, ".h") ? out : out / (n + ".h");
      StagingDir stage(target_file.parent_path());
      write_files({codegen::emit_header(m.plan, target)}, stage.path());
      moves.emplace_back(stage.path() / (n + ".h"), target_file);
      commit(moves);
      break;
    }
    case EmitKind::Lib:
    case EmitKind::Obj: {
      const fs::path dir = out.parent_path();
      StagingDir stage(dir);
      write_files(m.files, stage.path());
      const std::vector<std::string> objects = build_objects(m, stage.path(), target, false, cc);
      const std::string product = kind == EmitKind::Lib ? "lib" + n + ".a" : n + ".o.tmp";
      if (kind == EmitKind::Lib)
        toolchain::make_archive(stage.path().string(), objects, product);
      else
        toolchain::link_relocatable(stage.path().string(), objects, product);
      moves.emplace_back(stage.path() / product, out);
      moves.emplace_back(stage.path() / (n + ".h"),
                         (dir.empty() ? fs::path(".") : dir) / (n + ".h"));
      commit(moves);
      break;
    }
  }
  std::vector<std::string> written;
  for (const auto& mv : moves) written.push_back(mv.second.string());
  return written;
}

std::string build_shared_library(const CompiledModel& m, const std::string& dir,
                                 const ir::Target& target, CCompiler cc) {
  write_files(m.files, dir);
  if (target.is_cuda()) {
    const std::string& n = m.plan.name;
    const codegen::GeneratedFile harness = codegen::hosted_harness(m.plan, m.profiled);
    std::ofstream(fs::path(dir) / harness.name) << harness.contents;
    const std::string so = "lib" + n + ".so";
    if (target.runs_here) {
      std::vector<std::string> objects = {
          toolchain::compile_cuda_object(dir, n + ".cu", target, true),
          toolchain::compile_cuda_object(dir, harness.name, target, true)};
      for (const std::string& o : toolchain::compile_objects(dir, {n + "_weights.S"}, target, true))
        objects.push_back(o);
      toolchain::link_cuda_shared_library(dir, objects, so);
    } else {
      toolchain::build_emulated_library(dir, {n + ".cu", harness.name, n + "_weights.S"}, so,
                                        codegen::runtime_file("cuda_runtime.h"));
    }
    return (fs::path(dir) / so).string();
  }
  const std::vector<std::string> objects = build_objects(m, dir, target, true, cc);
  const std::string so = "lib" + m.plan.name + ".so";
  toolchain::link_shared(dir, objects, so);
  return (fs::path(dir) / so).string();
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

std::string hosted_entry(const CompiledModel& m, const ir::Target& target) {
  return m.plan.name + (target.is_cuda() ? "_hosted" : "");
}

std::string depfile_text(const std::string& output, const std::vector<std::string>& inputs) {
  auto escape = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == ' ' || c == '#' || c == ':') out += '\\';
      if (c == '$') out += '$';
      out += c;
    }
    return out;
  };
  std::string text = escape(output) + ":";
  for (const std::string& i : inputs) text += " " + escape(i);
  return text + "\n";
}

}  // namespace tlmc::driver
