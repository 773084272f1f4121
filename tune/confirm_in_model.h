// -O3's last step: each kernel's few fastest schedules by its records, and its -O0 schedule,
// are timed inside the model (builds with a timer around each call) and recorded as such;
// a build then takes, per kernel, the candidate of least in-model time (chosen_candidate).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "scheduler/decision.h"
#include "scheduler/tuning_db.h"

namespace tlmc::tune {

// In-model records are kept under the target's descriptor followed by this: a kernel alone
// and the same kernel inside its model are two measurements, never compared.
inline constexpr const char* kInModelContext = " context=model";
// How many of a kernel's fastest records compete in the model (its -O0 schedule besides).
inline constexpr size_t kInModelCandidates = 3;

// What may run for one kernel: its fastest records' schedules, fastest first, then its -O0
// schedule when no record of those is it.
struct KernelCandidates {
  std::string workload_key;
  std::string workload;            // the subgraph's text (TuningRecord::workload)
  std::vector<std::string> texts;  // the schedules as the records write them
  std::vector<std::vector<scheduler::Decision>> schedules;
  size_t records = 0;        // how many of them come from records (the first ones)
  size_t default_index = 0;  // which of them is the -O0 schedule
};

// One timed build: the whole run, and per kernel its average call.
struct VariantTimes {
  double run_seconds = 0;
  std::vector<double> kernel_seconds;
};
// Builds the model with candidate choice[k] for kernel k, runs it, times it.
using RunVariant = std::function<VariantTimes(const std::vector<size_t>& choice)>;

struct InModelReport {
  bool measured = false;   // false: every candidate had its in-model record already
  int builds = 0;          // timed builds
  double records_run = 0;  // a run with each kernel's fastest record
  double default_run = 0;  // a run with the -O0 schedules
  double chosen_run = 0;   // a run with the chosen candidates
};

// The candidate a build takes: of those with an in-model record in `db` (`descriptor`: the
// target's, with kInModelContext), the fastest; without any, the fastest record (the
// first), else -O0's.
size_t chosen_candidate(const KernelCandidates& c, const scheduler::TuningDb& db,
                        const std::string& descriptor);

// Unless every candidate has its in-model record (`descriptor`: the target's, with
// kInModelContext), times builds that cycle through the candidates (the fastest records
// first, -O0's schedules last) and then the chosen ones, recording every kernel's time.
InModelReport confirm_in_model(const std::vector<KernelCandidates>& kernels, const RunVariant& run,
                               scheduler::TuningDb& db, const std::string& descriptor);

}  // namespace tlmc::tune
