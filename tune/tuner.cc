#include "tune/tuner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>
#include <set>

#include "scheduler/default_schedule.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"
#include "tune/search_strategy.h"

namespace tlmc::tune {
namespace {

using Clock = std::chrono::steady_clock;
using scheduler::MeasureStatus;
using scheduler::TuningRecord;

TuningRecord record_of(const MeasureTask& task, const ir::Target& target, std::string schedule,
                       const MeasureResult& r) {
  TuningRecord rec;
  rec.workload_key = task.workload_key;
  rec.target = target.descriptor();
  rec.schedule = std::move(schedule);
  rec.status = r.status;
  rec.seconds = r.status == MeasureStatus::Ok ? r.seconds : 0;
  rec.reason = r.reason;
  rec.measured_at = scheduler::utc_now();
  rec.workload = ir::te_canonical_str(task.program);
  return rec;
}

double gflops(double flops, double seconds) { return seconds > 0 ? flops / seconds * 1e-9 : 0; }

// Tunes one task with `share` trials; returns its report.
TaskReport tune_task(const TuneTask& t, const ir::Target& target, scheduler::TuningDb& db,
                     const TuneOptions& options, int64_t share, std::ostream& progress, bool live,
                     const std::string& label) {
  const MeasureTask& task = t.measure;
  TaskReport report{task.workload_key, t.occurrences, task.flops, 0, 0, 0};
  const scheduler::Sketch sketch = scheduler::generate_sketch(task.program, target);
  std::unique_ptr<SearchStrategy> search = make_random_search(sketch, options.seed);
  Measurer measurer(task, target, options.measure);

  // What earlier runs recorded: the baseline, and points of this sketch already measured.
  const std::string baseline_text =
      scheduler::schedule_record_text(scheduler::default_schedule(task.program, target));
  for (const TuningRecord& r : db.records(task.workload_key, target.descriptor())) {
    if (r.schedule == baseline_text && r.status == MeasureStatus::Ok)
      report.default_seconds = r.seconds;
    std::optional<std::vector<int64_t>> values =
        scheduler::parse_space_schedule(sketch, r.schedule);
    if (!values) continue;
    MeasureResult m;
    m.status = r.status;
    m.seconds = r.seconds;
    search->observe(*values, m);
    ++report.trials;
  }
  if (report.default_seconds == 0) {
    const MeasureResult base = measurer.measure(scheduler::default_schedule(task.program, target));
    db.add({record_of(task, target, baseline_text, base)});
    report.default_seconds = base.status == MeasureStatus::Ok ? base.seconds : 0;
  }
  const Clock::time_point start = Clock::now();
  const int64_t resumed = report.trials;
  while (report.trials < share) {
    const size_t n = std::min<size_t>(options.batch, static_cast<size_t>(share - report.trials));
    const std::vector<std::vector<int64_t>> batch = search->propose(n);
    if (batch.empty()) break;  // the space is exhausted
    std::vector<std::vector<scheduler::Decision>> schedules;
    for (const std::vector<int64_t>& values : batch) schedules.push_back(sketch.decisions(values));
    const std::vector<MeasureResult> results = measurer.measure_batch(schedules, options.jobs);
    std::vector<TuningRecord> records;
    for (size_t i = 0; i < batch.size(); ++i) {
      search->observe(batch[i], results[i]);
      records.push_back(
          record_of(task, target, scheduler::space_schedule_text(sketch, batch[i]), results[i]));
      ++report.trials;
    }
    db.add(records);
    if (live) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      const double per = elapsed / static_cast<double>(report.trials - resumed);
      const std::optional<TuningRecord> best = db.best(task.workload_key, target.descriptor());
      char line[200];
      std::snprintf(line, sizeof line,
                    "\rtlmc: %s trials %lld/%lld, best %.1f GFLOP/s, %.0f s left  ", label.c_str(),
                    static_cast<long long>(report.trials), static_cast<long long>(share),
                    gflops(task.flops, best ? best->seconds : 0),
                    per * static_cast<double>(share - report.trials));
      progress << line << std::flush;
    }
  }
  const std::optional<TuningRecord> best = db.best(task.workload_key, target.descriptor());
  report.best_seconds = best ? best->seconds : report.default_seconds;
  return report;
}

}  // namespace

std::vector<TaskReport> tune_tasks(const std::vector<TuneTask>& tasks, const ir::Target& target,
                                   scheduler::TuningDb& db, const TuneOptions& options,
                                   std::ostream& progress, bool live) {
  std::vector<TaskReport> reports;
  if (tasks.empty()) return reports;
  // An equal share of the trials per task, for now.
  const int64_t share = std::max<int64_t>(1, options.trials / static_cast<int64_t>(tasks.size()));
  const Clock::time_point start = Clock::now();
  for (size_t i = 0; i < tasks.size(); ++i) {
    const std::string label =
        "task " + std::to_string(i + 1) + " of " + std::to_string(tasks.size());
    reports.push_back(tune_task(tasks[i], target, db, options, share, progress, live, label));
  }
  if (live) progress << "\n";
  int64_t trials = 0;
  for (const TaskReport& r : reports) trials += r.trials;
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  progress << "tlmc: tuned " << tasks.size() << " subgraphs with " << trials << " trials in "
           << static_cast<int64_t>(seconds) << " s (records in " << db.path() << ")\n";
  return reports;
}

void print_tune_report(std::ostream& os, const std::vector<TaskReport>& reports) {
  double total = 0;
  for (const TaskReport& r : reports) total += r.best_seconds * r.occurrences;
  os << "  workload          times  share  trials  GFLOP/s  speedup over -O0\n";
  for (const TaskReport& r : reports) {
    char line[160];
    const double share = total > 0 ? r.best_seconds * r.occurrences / total : 0;
    std::snprintf(line, sizeof line, "  %-16s %6d %5.1f%% %7lld %8.1f  %.2fx\n",
                  r.workload_key.c_str(), r.occurrences, 100 * share,
                  static_cast<long long>(r.trials), gflops(r.flops, r.best_seconds),
                  r.best_seconds > 0 ? r.default_seconds / r.best_seconds : 0.0);
    os << line;
  }
}

}  // namespace tlmc::tune
