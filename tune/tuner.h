// Tunes the distinct subgraphs (tasks) of a model on this machine: measures each task's
// -O0 schedule as its baseline, then spends the trial budget in rounds, each round on the
// task whose next trials promise to shorten the model's latency most (occurrences times the
// expected improvement: Ansor's task scheduler), with a search strategy per task, recording
// every measurement in the tuning database as it goes. Trials recorded by an earlier run
// count: a run that was stopped resumes, and a repeated run measures nothing.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "ir/target.h"
#include "scheduler/tuning_db.h"
#include "tune/measurer.h"
#include "tune/search_strategy.h"

namespace tlmc::tune {

struct TuneTask {
  MeasureTask measure;
  int occurrences = 1;  // how often one run of the model runs this subgraph
  // When the model may run in several activation layouts (layout plans), the occurrences
  // of this subgraph in each plan (0 where the plan does not run it); the model runs the
  // plan of least latency. Empty: one plan, with `occurrences`.
  std::vector<int> plan_occurrences = {};
};

enum class SearchKind { Random, Evolutionary, Model };

struct TuneOptions {
  SearchKind search = SearchKind::Evolutionary;
  EvolutionOptions evolution;  // SearchKind::Evolutionary only
  // SearchKind::Model; with SearchKind::Evolutionary, a model seeds the search (none: random)
  ModelSearchOptions model_search;
  int64_t trials = 0;          // measurements in all, over every task (the baselines excluded)
  size_t batch = 16;           // candidates proposed, then measured and recorded, per round
  int jobs = 1;                // threads compiling a round's candidates
  int64_t early_stopping = 0;  // a task stops after this many trials without improving; 0: never
  uint64_t seed = 1;
  MeasureOptions measure;
  // With `live`, a line per round ending in a newline (a log: --progress) instead of one
  // line rewritten in place (a terminal).
  bool progress_lines = false;
};

struct TaskReport {
  std::string workload_key;
  std::string description;  // MeasureTask::description
  int occurrences = 1;
  std::vector<int> plan_occurrences;  // TuneTask::plan_occurrences
  double flops = 0;
  int64_t trials = 0;          // candidates measured for it, in this run and before
  double default_seconds = 0;  // the -O0 schedule
  double best_seconds = 0;     // the best record (the -O0 schedule's if none is better)
};

// progress: stderr; with `live`, a line per round (the task, its best, the budget spent and
// the time so far in proposing, compiling and running), then a summary.
std::vector<TaskReport> tune_tasks(const std::vector<TuneTask>& tasks, const ir::Target& target,
                                   scheduler::TuningDb& db, const TuneOptions& options,
                                   std::ostream& progress, bool live);

// The model's latency in each layout plan from the tasks' best times (occurrences times
// best time); 0 for a plan with a subgraph that never ran.
std::vector<double> plan_latencies(const std::vector<TaskReport>& reports);

// The table printed after tuning: each task, its share of the latency (none for a task
// only a slower layout plan runs: the model does not run it), trials, speedup.
void print_tune_report(std::ostream& os, const std::vector<TaskReport>& reports);

}  // namespace tlmc::tune
