#include "tune/tuner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <limits>
#include <memory>
#include <ostream>

#include "ir/diagnostic.h"
#include "ir/te_text.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"
#include "toolchain/timing_lock.h"
#include "tune/search_strategy.h"

namespace tlmc::tune {
namespace {

using Clock = std::chrono::steady_clock;
using scheduler::MeasureStatus;
using scheduler::TuningRecord;

// A candidate is stopped once it has run this many times longer than the task's best
// schedule would have for its check and timing: it cannot win, and a slow one (a scalar
// 1024^3 product, say) would otherwise take the whole time limit.
constexpr double kSlowdownLimit = 20;

// A candidate this many times slower than the task's best at its first timed run is timed
// no further (Measurer::set_slow_cut): the noise of one run is far less, so it cannot win.
constexpr double kSlowCut = 2;

// The task scheduler's weight of the last round's improvement against the optimistic guess
// that the next trials improve as much as the first ones did on average (Ansor's alpha).
constexpr double kRecentWeight = 0.2;

// A round of at least this many candidates, all of them out of time, ends its task.
constexpr size_t kTimedOutRound = 4;

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
  rec.workload = ir::te_to_text(task.program);
  return rec;
}

double gflops(double flops, double seconds) { return seconds > 0 ? flops / seconds * 1e-9 : 0; }

// One task being tuned: its search, its worker, what it found so far.
struct TaskState {
  const TuneTask* task;
  scheduler::Sketches sketches;
  std::unique_ptr<SearchStrategy> search;
  std::unique_ptr<Measurer> measurer;
  TaskReport report;
  double best = 0;               // best time so far (the baseline's when nothing is better)
  double evict = 0;              // the longest eviction of its weights before a cold run
  double best_before_round = 0;  // best before the last round
  int64_t trials_before_round = 0;
  int64_t last_improvement = 0;  // trials when the best last got better
  bool done = false;             // exhausted its space, or stopped early
  bool measured_now = false;     // this run measured a schedule of it
};

// What an extra trial of a task is estimated to save of the model's latency (the
// gradient of Ansor's task scheduler, without its similarity term): the last round's
// improvement per trial, mixed with the average improvement per trial so far.
double gradient(const TaskState& s) {
  // Nothing has run yet (the baseline failed): anything that runs is a gain; early stopping
  // ends a task that never runs.
  if (s.best <= 0) return std::numeric_limits<double>::max();
  const int64_t t = std::max<int64_t>(1, s.report.trials);
  const double recent = s.report.trials > s.trials_before_round
                            ? (s.best_before_round - s.best) /
                                  static_cast<double>(s.report.trials - s.trials_before_round)
                            : 0;
  const double optimistic = s.best / static_cast<double>(t);
  return s.task->occurrences * (kRecentWeight * recent + (1 - kRecentWeight) * optimistic);
}

// How often the model runs the task's subgraph in layout plan p.
int occurrences_in(const TaskReport& r, size_t p) {
  return r.plan_occurrences.empty() ? r.occurrences : r.plan_occurrences.at(p);
}

// The gradient of a task when the model may run in several layout plans: scaled by how
// close the latency of its fastest plan is to the fastest plan's, which its trials must
// beat to matter.
double plan_gradient(const TaskState& s, const std::vector<double>& plans) {
  const double g = gradient(s);
  if (s.best <= 0 || g == std::numeric_limits<double>::max()) return g;
  double best_plan = 0, own_plan = 0;
  for (size_t p = 0; p < plans.size(); ++p) {
    if (plans[p] <= 0) return g;  // a plan not measured yet: no plan leads
    best_plan = best_plan > 0 ? std::min(best_plan, plans[p]) : plans[p];
    if (occurrences_in(s.report, p) > 0)
      own_plan = own_plan > 0 ? std::min(own_plan, plans[p]) : plans[p];
  }
  return own_plan > 0 ? g * best_plan / own_plan : g;
}

// A measurement of the task's schedule space (this run's, or a record's read back).
void note(TaskState& s, const MeasureResult& r) {
  s.evict = std::max(s.evict, r.evict_seconds);
  if (r.status != MeasureStatus::Ok || r.seconds <= 0) return;
  if (s.best == 0 || r.seconds < s.best) {
    s.best = r.seconds;
    s.report.best_seconds = r.seconds;
    s.last_improvement = s.report.trials;
  }
}

// A measurement the machine failed, not the candidate (MeasureResult::environment: no GPU
// in the worker, a driver that cannot load the toolkit's code, no device memory) stops the
// tuning before anything of it is recorded.
void stop_if_the_machine_failed(const MeasureResult& r, const ir::Target& target) {
  if (r.environment)
    throw Diagnostic({}, "measuring candidates on " + target.name +
                             " failed, and not for a candidate's fault: " + r.reason +
                             "; nothing of it was recorded. Compile at -O1, or tune on a "
                             "machine whose GPU driver runs this CUDA toolkit's code");
}

// The baseline and what earlier runs recorded.
void start(TaskState& s, int index, CostModel& model, const ir::Target& target,
           scheduler::TuningDb& db, const TuneOptions& options) {
  const MeasureTask& task = s.task->measure;
  s.report = TaskReport{task.workload_key, task.description, s.task->occurrences,
                        s.task->plan_occurrences, task.flops};
  const uint64_t seed = options.seed + static_cast<uint64_t>(index);
  switch (options.search) {
    case SearchKind::Random:
      s.search = make_random_search(s.sketches, seed);
      break;
    case SearchKind::Evolutionary: {
      // The model's points stand in for the search's random ones: new samples, no
      // mutations (the search mutates on its own).
      ModelSearchOptions seeding = options.model_search;
      seeding.mutation_fraction = 0;
      s.search = make_evolutionary_search(
          s.sketches, target, model, index, options.evolution, seed,
          seeding.model ? make_model_search(s.sketches, task.program, target, seeding, seed)
                        : nullptr);
      break;
    }
    case SearchKind::Model:
      s.search = make_model_search(s.sketches, task.program, target, options.model_search, seed);
      break;
  }
  s.measurer = std::make_unique<Measurer>(task, target, options.measure);
  // The baseline is the -O0 schedule: the first sketch's default point.
  const scheduler::SpacePoint baseline{0, scheduler::default_values(s.sketches[0])};
  const std::string baseline_text = scheduler::space_schedule_text(s.sketches, baseline);
  bool baseline_recorded = false;
  for (const TuningRecord& r : db.records(task.workload_key, target.descriptor())) {
    // Records of another tlmc (a sketch or space that changed, a value no longer listed)
    // are left out: neither observed nor counted.
    std::optional<scheduler::SpacePoint> point =
        scheduler::listed_space_point(s.sketches, r.schedule);
    if (!point) continue;
    MeasureResult m;
    m.status = r.status;
    m.seconds = r.seconds;
    s.search->observe(*point, m);
    note(s, m);
    if (r.schedule != baseline_text) {
      ++s.report.trials;
      continue;
    }
    baseline_recorded = true;
    s.report.default_seconds = r.status == MeasureStatus::Ok ? r.seconds : 0;
  }
  if (!baseline_recorded) {
    const MeasureResult base = s.measurer->measure(s.sketches[0].decisions(baseline.values));
    stop_if_the_machine_failed(base, target);
    db.add({record_of(task, target, baseline_text, base)});
    s.measured_now = true;
    s.search->observe(baseline, base);
    note(s, base);
    s.report.default_seconds = base.status == MeasureStatus::Ok ? base.seconds : 0;
  }
  s.best_before_round = s.best;
  s.trials_before_round = s.report.trials;
  s.last_improvement = s.report.trials;
}

// Wall-clock seconds of a run's phases outside the measurers (MeasureTimes has theirs).
struct SearchTimes {
  double proposing = 0;  // the search strategy: sampling, mutation, the cost model
  double recording = 0;  // observing results (the cost model's training) and the database
};

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// One round of a task: a batch proposed, measured and recorded.
void round(TaskState& s, const ir::Target& target, scheduler::TuningDb& db,
           const TuneOptions& options, int64_t trials, SearchTimes& times) {
  const Clock::time_point proposing = Clock::now();
  const std::vector<scheduler::SpacePoint> batch = s.search->propose(static_cast<size_t>(trials));
  times.proposing += seconds_since(proposing);
  if (batch.empty()) {
    s.done = true;  // the space is exhausted
    return;
  }
  std::vector<std::vector<scheduler::Decision>> schedules;
  for (const scheduler::SpacePoint& p : batch)
    schedules.push_back(s.sketches[p.sketch].decisions(p.values));
  // The check, the warm-up and the repeats each run the kernel at least once, a fast one
  // for min_seconds, a cold one after evicting its weights; a second of slack for starting
  // a worker. Without a time to compare with (nothing has run yet), the full limit.
  const double runs = 2 + options.measure.repeats;
  const double budget =
      1 + kSlowdownLimit * runs * std::max(s.best + s.evict, options.measure.min_seconds);
  s.measurer->set_timeout(s.best > 0 ? std::min(options.measure.timeout_seconds, budget)
                                     : options.measure.timeout_seconds);
  s.measurer->set_slow_cut(kSlowCut * s.best);
  const std::vector<MeasureResult> results = s.measurer->measure_batch(schedules, options.jobs);
  for (const MeasureResult& r : results) stop_if_the_machine_failed(r, target);
  const Clock::time_point recording = Clock::now();
  std::vector<TuningRecord> records;
  s.best_before_round = s.best;
  s.trials_before_round = s.report.trials;
  for (size_t i = 0; i < batch.size(); ++i) {
    s.search->observe(batch[i], results[i]);
    ++s.report.trials;
    note(s, results[i]);
    records.push_back(record_of(s.task->measure, target,
                                scheduler::space_schedule_text(s.sketches, batch[i]), results[i]));
  }
  db.add(records);
  s.measured_now = true;
  times.recording += seconds_since(recording);
  if (options.early_stopping > 0 && s.report.trials - s.last_improvement >= options.early_stopping)
    s.done = true;
  // A round in which every candidate ran out of time ends the task, if it was a round of a
  // few or nothing of the task has ever run: each such trial costs the whole limit, and a
  // task that never runs would otherwise keep the largest gradient.
  const bool all_timed_out =
      std::all_of(results.begin(), results.end(),
                  [](const MeasureResult& r) { return r.status == MeasureStatus::TimedOut; });
  if (all_timed_out && (results.size() >= kTimedOutRound || s.best <= 0)) s.done = true;
}

// A kernel's fastest timing varies by up to 2x between runs on a shared machine, and the
// fastest of many noisy timings is biased low: a search's best may owe its place to one
// lucky run (-O2 with 32 measurements has ended slower than with 10). Before a record is
// trusted, the task's kConfirmed fastest successes are timed again, interleaved (A B C,
// A B C, A B C), so that a slow spell of the machine hits them alike; each keeps the
// median of its re-timings as its time, and their spread. The database prefers confirmed
// records (TuningDb::best).
//
// A median may come out slower than an unconfirmed record's single time; that record is
// then among the fastest by time and is confirmed in a further pass, up to kConfirmPasses.
// Confirmation runs where this run measured something, or where fewer than kConfirmed
// records are confirmed (a run stopped while confirming): a repeated run re-times nothing,
// and builds the same schedules.
constexpr size_t kConfirmed = 3;
constexpr int kConfirmRounds = 3;
constexpr int kConfirmPasses = 3;

// The task's kConfirmed fastest successes by time alone (an unconfirmed record faster than
// the confirmed ones is among them) that the task's sketches read, with their schedules;
// how many of all the successes it reads are confirmed, and the fastest of those.
struct Fastest {
  std::vector<TuningRecord> records;
  std::vector<std::vector<scheduler::Decision>> schedules;
  size_t confirmed = 0, readable = 0;
  double best_confirmed = 0;
};

Fastest fastest_records(const TaskState& s, const ir::Target& target,
                        const scheduler::TuningDb& db) {
  std::vector<TuningRecord> ok;
  for (const TuningRecord& r : db.records(s.task->measure.workload_key, target.descriptor()))
    if (r.status == MeasureStatus::Ok) ok.push_back(r);
  std::stable_sort(ok.begin(), ok.end(), [](const TuningRecord& a, const TuningRecord& b) {
    return a.seconds < b.seconds;
  });
  Fastest f;
  for (const TuningRecord& r : ok) {
    std::optional<scheduler::SpacePoint> point =
        scheduler::parse_space_schedule(s.sketches, r.schedule);
    if (!point) continue;
    std::vector<scheduler::Decision> schedule;
    try {
      schedule = s.sketches[point->sketch].decisions(point->values);
    } catch (const scheduler::InvalidDecision&) {
      continue;
    }
    ++f.readable;
    if (r.spread > 0 && f.confirmed++ == 0) f.best_confirmed = r.seconds;
    if (f.records.size() == kConfirmed) continue;
    f.records.push_back(r);
    f.schedules.push_back(std::move(schedule));
  }
  return f;
}

void confirm_fastest(TaskState& s, const ir::Target& target, scheduler::TuningDb& db, int jobs) {
  Fastest f = fastest_records(s, target, db);
  const bool due = s.measured_now || f.confirmed < std::min(kConfirmed, f.readable);
  s.measurer->set_slow_cut(0);
  for (int pass = 0; due && pass < kConfirmPasses; ++pass) {
    if (std::all_of(f.records.begin(), f.records.end(),
                    [](const TuningRecord& r) { return r.spread > 0; }))
      break;
    // Each round one batch, the records in turn (a CUDA target's batch is one worker and
    // one context, not one per record).
    std::vector<std::vector<double>> times(f.records.size());
    for (int round = 0; round < kConfirmRounds; ++round) {
      const std::vector<MeasureResult> results = s.measurer->measure_batch(f.schedules, jobs);
      for (size_t i = 0; i < f.records.size(); ++i) {
        const MeasureResult& m = results[i];
        stop_if_the_machine_failed(m, target);
        if (m.status == MeasureStatus::Ok && m.seconds > 0) times[i].push_back(m.seconds);
      }
    }
    bool confirmed = false;
    for (size_t i = 0; i < f.records.size(); ++i) {
      std::vector<double>& t = times[i];
      if (t.empty()) continue;  // failed now, after passing before: left as it was
      std::sort(t.begin(), t.end());
      db.confirm(f.records[i], t[t.size() / 2], t.back() / t.front());
      confirmed = true;
    }
    if (!confirmed) break;  // nothing ran: another pass would find the same records
    f = fastest_records(s, target, db);
  }
  // The task's best is its fastest confirmed record, as a build chooses.
  if (f.best_confirmed > 0) s.best = f.best_confirmed;
}

// Where the tasks' measurers' time went, added up.
MeasureTimes measure_times(const std::vector<TaskState>& states) {
  MeasureTimes m;
  for (const TaskState& s : states) {
    m.lowering += s.measurer->times().lowering;
    m.compiling += s.measurer->times().compiling;
    m.running += s.measurer->times().running;
  }
  return m;
}

}  // namespace

std::vector<TaskReport> tune_tasks(const std::vector<TuneTask>& tasks, const ir::Target& target,
                                   scheduler::TuningDb& db, const TuneOptions& options,
                                   std::ostream& progress, bool live) {
  std::vector<TaskReport> reports;
  if (tasks.empty()) return reports;
  const Clock::time_point begin = Clock::now();
  const double waited_before = toolchain::timing_lock_waited_seconds();
  std::vector<TaskState> states;
  states.reserve(tasks.size());
  int64_t spent = 0, measured = 0;
  SearchTimes search_times;
  CostModel model;  // one for all tasks: what one teaches carries over to the others
  for (const TuneTask& t : tasks) {
    states.push_back(
        TaskState{&t, scheduler::generate_sketches(t.measure.program, target), {}, {}, {}});
    start(states.back(), static_cast<int>(states.size() - 1), model, target, db, options);
  }
  // Trials an earlier run recorded count: a stopped run resumes, a repeated one measures
  // nothing. But while some task has not had its first round (its records came from
  // another model's tuning, say), each task's records count only up to its share, so a
  // subgraph tuned long ago does not use up the budget of the ones never tuned.
  const int64_t batch = static_cast<int64_t>(std::max<size_t>(1, options.batch));
  const int64_t share = std::max<int64_t>(1, options.trials / static_cast<int64_t>(tasks.size()));
  const int64_t first_round = std::min(batch, share);
  bool all_started = true;
  for (const TaskState& s : states) all_started = all_started && s.report.trials >= first_round;
  for (const TaskState& s : states)
    spent += all_started ? s.report.trials : std::min(s.report.trials, share);
  // First a round for every task that has none, then the task whose next trials promise to
  // shorten the model's latency most, until the budget is spent or every task is done.
  for (;;) {
    TaskState* next = nullptr;
    for (TaskState& s : states)
      if (!s.done && s.report.trials == 0) next = next ? next : &s;
    if (!next) {
      std::vector<TaskReport> now;
      for (const TaskState& s : states) now.push_back(s.report);
      const std::vector<double> plans = plan_latencies(now);
      double best_gradient = -1;
      for (TaskState& s : states) {
        if (s.done) continue;
        const double g = plan_gradient(s, plans);
        if (g > best_gradient) {
          best_gradient = g;
          next = &s;
        }
      }
    }
    if (!next || spent >= options.trials) break;
    // A first round is the task's equal share when the budget is small.
    const int64_t n =
        std::min({next->report.trials == 0 ? first_round : batch, options.trials - spent});
    const int64_t before = next->report.trials;
    round(*next, target, db, options, n, search_times);
    spent += next->report.trials - before;
    measured += next->report.trials - before;
    if (live) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
      const double per = measured > 0 ? elapsed / static_cast<double>(measured) : 0;
      const MeasureTimes m = measure_times(states);
      char line[300];
      std::snprintf(
          line, sizeof line,
          "%stlmc: task %zu of %zu: %lld trials, best %.1f GFLOP/s; %lld of %lld "
          "trials, about %.0f s left (proposing %.0f s, compiling %.0f s, running "
          "%.0f s)%s",
          options.progress_lines ? "" : "\r", static_cast<size_t>(next - states.data()) + 1,
          states.size(), static_cast<long long>(next->report.trials),
          gflops(next->task->measure.flops, next->best), static_cast<long long>(spent),
          static_cast<long long>(options.trials),
          per * static_cast<double>(std::max<int64_t>(0, options.trials - spent)),
          search_times.proposing, m.compiling, m.running, options.progress_lines ? "\n" : "  ");
      progress << line << std::flush;
    }
  }
  if (live && !options.progress_lines) progress << "\n";
  for (TaskState& s : states)
    confirm_fastest(s, target, db, options.jobs);  // counted in the time below
  for (TaskState& s : states) {
    s.report.best_seconds = s.best;
    reports.push_back(s.report);
  }
  const MeasureTimes m = measure_times(states);
  // Waiting for the timing lock (toolchain/timing_lock.h) is part of running.
  const double waited = toolchain::timing_lock_waited_seconds() - waited_before;
  char waiting[80] = "";
  if (waited >= 0.5)
    std::snprintf(waiting, sizeof waiting, " (%.0f s of it waiting for another tlmc's timing)",
                  waited);
  char phases[240];
  std::snprintf(phases, sizeof phases,
                "proposing %.0f s, lowering %.0f s, compiling %.0f s, running %.0f s%s, "
                "recording %.0f s",
                search_times.proposing, m.lowering, m.compiling, m.running, waiting,
                search_times.recording);
  int64_t uniform = 0;
  for (const TaskState& s : states)
    if (s.search) uniform += s.search->uniform_fill();
  progress << "tlmc: tuned " << tasks.size() << (tasks.size() == 1 ? " subgraph" : " subgraphs")
           << " with " << spent << " trials (" << measured << " measured now) in " << std::fixed
           << std::setprecision(1) << seconds_since(begin) << std::defaultfloat << " s (" << phases
           << ")";
  if (uniform > 0)
    progress << "; " << uniform << (uniform == 1 ? " point was" : " points were")
             << " drawn uniformly, the model writing no new one";
  progress << "; records in " << db.path() << "\n";
  return reports;
}

std::vector<double> plan_latencies(const std::vector<TaskReport>& reports) {
  size_t n = 1;
  for (const TaskReport& r : reports) n = std::max(n, r.plan_occurrences.size());
  std::vector<double> latency(n, 0);
  for (size_t p = 0; p < n; ++p) {
    for (const TaskReport& r : reports) {
      const int times = occurrences_in(r, p);
      if (times == 0) continue;
      if (r.best_seconds <= 0) {
        latency[p] = -1;
        break;
      }
      latency[p] += times * r.best_seconds;
    }
    latency[p] = std::max(0.0, latency[p]);
  }
  return latency;
}

// The kernel column's width: a product, its epilogue's first operators.
constexpr size_t kKernelWidth = 60;

void print_tune_report(std::ostream& os, const std::vector<TaskReport>& reports) {
  // Occurrences are counted in the plan of least estimated latency (the first of equals); the
  // driver then times the complete plans in the model and builds the fastest of those.
  const std::vector<double> plans = plan_latencies(reports);
  size_t plan = 0;
  for (size_t p = 1; p < plans.size(); ++p)
    if (plans[p] > 0 && (plans[plan] <= 0 || plans[p] < plans[plan])) plan = p;
  const double total = plans[plan];
  if (plans.size() > 1) {
    os << "  layout plans (estimated latency):";
    for (size_t p = 0; p < plans.size(); ++p) {
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.3f ms", plans[p] * 1e3);
      os << (p ? ", " : " ") << p << ": " << (plans[p] > 0 ? ms : "not measured")
         << (p == plan ? " (least)" : "");
    }
    os << "\n";
  }
  os << "  workload          times  share  trials  GFLOP/s  speedup over -O0  kernel\n";
  for (const TaskReport& r : reports) {
    char line[160];
    const int times = occurrences_in(r, plan);
    const double share = total > 0 && times > 0 ? r.best_seconds * times / total : 0;
    std::snprintf(line, sizeof line, "  %-16s %6d %5.1f%% %7lld %8.1f  %15.2fx  ",
                  r.workload_key.c_str(), r.occurrences, 100 * share,
                  static_cast<long long>(r.trials), gflops(r.flops, r.best_seconds),
                  r.best_seconds > 0 ? r.default_seconds / r.best_seconds : 0.0);
    std::string kernel = r.description;
    if (kernel.size() > kKernelWidth) kernel = kernel.substr(0, kKernelWidth - 3) + "...";
    os << line << kernel << "\n";
  }
}

}  // namespace tlmc::tune
