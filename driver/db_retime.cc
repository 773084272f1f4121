#include "driver/db_retime.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>

#include "driver/lm_keys.h"
#include "ir/diagnostic.h"
#include "scheduler/decision.h"
#include "scheduler/sketch.h"
#include "scheduler/tuning_db.h"
#include "tune/measure_task.h"
#include "tune/measurer.h"

namespace tlmc::driver {
namespace {

// A column's schedule for one kernel: nullopt where its database has none.
using Candidate = std::optional<std::vector<scheduler::Decision>>;

// The fastest successful record of `db` for the kernel whose schedule applies (and, with
// `without`, is not `without`'s).
Candidate best_schedule(const scheduler::TuningDb& db, const std::string& key,
                        const ir::Target& target, const ir::TeProgram& program,
                        const std::string* without) {
  for (const scheduler::TuningRecord& r : db.records(key, target.descriptor())) {
    if (r.status != scheduler::MeasureStatus::Ok) break;  // successes come first
    Candidate s = scheduler::schedule_from_record(r.schedule, program, target);
    if (s && (!without || scheduler::schedule_str(*s) != *without)) return s;
  }
  return std::nullopt;
}

std::string cell(double seconds) {
  if (!(seconds < std::numeric_limits<double>::infinity())) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", seconds * 1e6);
  return text;
}

}  // namespace

int retime(const RetimeOptions& o) {
  const ir::Target target = ir::host_target();
  if (!target.runs_here)
    throw Diagnostic({}, "tlmc db retime times on this machine, which runs no x86-64 target");
  std::vector<scheduler::TuningDb> dbs;
  for (const std::string& path : o.databases) {
    if (!std::filesystem::exists(path))
      throw Diagnostic({path}, "no such tuning database: name the files tlmc tuned into");
    dbs.push_back(scheduler::TuningDb::open(path, scheduler::DbAccess::Read));
  }
  tune::MeasureOptions measure;
  measure.threads = o.threads;
  const SplitModel split = split_model_file(o.model, target, false);
  std::printf(
      "# re-timed on %s: %d rounds, each candidate once a round in turn; "
      "microseconds, the least of the rounds' medians\nkernel\t-O0",
      target.descriptor().c_str(), o.rounds);
  for (const std::string& path : o.databases) std::printf("\t%s", path.c_str());
  std::printf("\n");
  std::vector<double> totals(dbs.size() + 1, 0);
  size_t kernels = 0;
  for (const Distinct& d : split.distinct) {
    if (!o.only.empty() && std::find(o.only.begin(), o.only.end(), d.key) == o.only.end()) continue;
    const tune::MeasureTask task = tune::make_measure_task(
        split.plans[static_cast<size_t>(d.plan)].graph, d.nodes, d.lowered, 1);
    const std::vector<scheduler::Decision> o0 = scheduler::default_schedule(task.program, target);
    const std::string o0_text = scheduler::schedule_str(o0);
    std::vector<Candidate> candidates{o0};
    for (const scheduler::TuningDb& db : dbs)
      candidates.push_back(
          best_schedule(db, d.key, target, task.program, o.without_o0 ? &o0_text : nullptr));
    if (o.only.empty() && std::none_of(candidates.begin() + 1, candidates.end(),
                                       [](const Candidate& c) { return c.has_value(); }))
      continue;  // no database tuned it
    ++kernels;
    std::vector<double> best(candidates.size(), std::numeric_limits<double>::infinity());
    tune::Measurer measurer(task, target, measure);
    for (int round = 0; round < o.rounds; ++round)
      for (size_t c = 0; c < candidates.size(); ++c) {
        // Each round starts at another candidate: none is always timed first.
        const size_t i = (c + static_cast<size_t>(round)) % candidates.size();
        if (!candidates[i]) continue;
        const tune::MeasureResult r = measurer.measure(*candidates[i]);
        if (r.status == scheduler::MeasureStatus::Ok) best[i] = std::min(best[i], r.seconds);
      }
    std::printf("%s", d.key.c_str());
    for (size_t i = 0; i < best.size(); ++i) {
      std::printf("\t%s", cell(best[i]).c_str());
      totals[i] += best[i];
    }
    std::printf("\n");
  }
  std::printf("total");
  for (double t : totals) std::printf("\t%s", cell(kernels ? t : 0).c_str());
  std::printf("\n");
  return 0;
}

}  // namespace tlmc::driver
