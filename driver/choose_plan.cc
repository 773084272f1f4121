#include "driver/choose_plan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>

#include "driver/pipeline.h"
#include "driver/profile.h"
#include "ir/diagnostic.h"
#include "ir/te_text.h"
#include "scheduler/channels_last_activations.h"
#include "tune/confirm_in_model.h"
#include "tune/measure_task.h"
#include "tune/schedule_choice.h"
#include "tune/tuner.h"

namespace tlmc::driver {
namespace {

using tune::KernelCandidates;
using tune::KernelRecords;

// What the schedule choice (tune/schedule_choice.h) takes from the build's options.
tune::ChoiceOptions choice_options(const CompileOptions& o) {
  return tune::ChoiceOptions{o.target,   o.opt_level, o.random_schedule_seed,
                             o.lm_model, o.verifier,  o.log_stream};
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
  options.progress_lines = o.progress_lines;
  std::ostringstream quiet;
  std::ostream& progress = o.progress_stream ? *o.progress_stream : quiet;
  const std::vector<tune::TaskReport> reports =
      tune::tune_tasks(tasks, o.target, db, options, progress, o.progress_live);
  tune::print_tune_report(progress, reports);
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

bool measures_on_gpu(const CompileOptions& o) {
  return o.target.is_cuda() && o.target.runs_here && !o.tuning_db.empty();
}

BuildChoice choose_build(const CompileOptions& o, const ir::Graph& model_graph,
                         const ir::Graph& graph, SplitModel& split, scheduler::TuningDb& db) {
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
    time_plans(o, model_graph, split, records, db);
  }
  BuildChoice choice;
  choice.plan = choose_plan(o, plans, distinct, records, db, rule);
  const LayoutPlan& plan = plans[choice.plan];
  if (o.dump_stream && wants(o, "graph") && plan.name != kModelLayout)
    *o.dump_stream << ir::graph_str(plan.graph);
  choice.kernels = plan_kernels(plan);
  const PlanKernels& kernels = choice.kernels;
  // -O3, once the plan is chosen (its kernels run together): their candidates are timed in
  // the model, and those times choose the schedules below.
  if (o.opt_level >= 3 && times_in_model) {
    PassTimer t(o, "time in the model");
    time_in_model(o, model_graph, plan, distinct, kernels, records, db);
  }
  {
    PassTimer t(o, "schedule");
    for (int i : kernels.distinct_of)
      choice.schedules.push_back(choose_schedule(o, distinct[static_cast<size_t>(i)],
                                                 records[static_cast<size_t>(i)], db,
                                                 &choice.from_records));
  }
  if (o.log_stream && !o.tuning_db.empty())
    *o.log_stream << "tlmc: " << choice.from_records << " of " << choice.schedules.size()
                  << " kernels scheduled from tuning records (" << o.tuning_db << ")\n";
  return choice;
}

}  // namespace tlmc::driver
