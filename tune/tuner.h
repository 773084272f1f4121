// Tunes the distinct subgraphs (tasks) of a model on this machine: measures each task's
// -O0 schedule as its baseline, then spends the trial budget over the tasks with a search
// strategy, recording every measurement in the tuning database as it goes. A task whose
// records already hold its share of trials is not measured again: a run that was stopped
// resumes from what it recorded.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "ir/target.h"
#include "scheduler/tuning_db.h"
#include "tune/measurer.h"

namespace tlmc::tune {

struct TuneTask {
  MeasureTask measure;
  int occurrences = 1;  // how often one run of the model runs this subgraph
};

struct TuneOptions {
  int64_t trials = 0;  // measurements in all, over every task (the baselines excluded)
  size_t batch = 16;   // candidates proposed, then measured and recorded, per round
  int jobs = 1;        // threads compiling a round's candidates
  uint64_t seed = 1;
  MeasureOptions measure;
};

struct TaskReport {
  std::string workload_key;
  int occurrences = 1;
  double flops = 0;
  int64_t trials = 0;          // candidates measured for it, in this run and before
  double default_seconds = 0;  // the -O0 schedule
  double best_seconds = 0;     // the best record (the -O0 schedule's if none is better)
};

// progress: stderr; one line per round when it is a terminal (`live`), else one summary.
std::vector<TaskReport> tune_tasks(const std::vector<TuneTask>& tasks, const ir::Target& target,
                                   scheduler::TuningDb& db, const TuneOptions& options,
                                   std::ostream& progress, bool live);

// The table printed after tuning: each task, its share of the latency, trials, speedup.
void print_tune_report(std::ostream& os, const std::vector<TaskReport>& reports);

}  // namespace tlmc::tune
