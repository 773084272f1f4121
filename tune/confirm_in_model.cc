#include "tune/confirm_in_model.h"

#include <algorithm>
#include <map>

#include "ir/diagnostic.h"

namespace tlmc::tune {
namespace {

// Seconds by schedule text of a kernel's successful in-model records.
std::map<std::string, double> in_model_times(const scheduler::TuningDb& db,
                                             const KernelCandidates& c,
                                             const std::string& descriptor) {
  std::map<std::string, double> times;
  for (const scheduler::TuningRecord& r : db.records(c.workload_key, descriptor))
    if (r.status == scheduler::MeasureStatus::Ok) times.emplace(r.schedule, r.seconds);
  return times;
}

bool all_timed_in_model(const KernelCandidates& c, const std::map<std::string, double>& times) {
  return std::all_of(c.texts.begin(), c.texts.end(),
                     [&](const std::string& t) { return times.count(t) > 0; });
}

// Runs one build and records each kernel's time in it.
VariantTimes run_and_record(const std::vector<KernelCandidates>& kernels,
                            const std::vector<size_t>& choice, const RunVariant& run,
                            scheduler::TuningDb& db, const std::string& descriptor) {
  VariantTimes t = run(choice);
  if (t.kernel_seconds.size() != kernels.size())
    throw InternalError("a timed build reported " + std::to_string(t.kernel_seconds.size()) +
                        " kernels of " + std::to_string(kernels.size()));
  std::vector<scheduler::TuningRecord> records;
  const std::string now = scheduler::utc_now();
  for (size_t k = 0; k < kernels.size(); ++k) {
    const KernelCandidates& c = kernels[k];
    if (t.kernel_seconds[k] <= 0) continue;  // a kernel no call of this run reached
    scheduler::TuningRecord r;
    r.workload_key = c.workload_key;
    r.target = descriptor;
    r.schedule = c.texts.at(choice[k]);
    r.seconds = t.kernel_seconds[k];
    r.measured_at = now;
    r.workload = c.workload;
    records.push_back(std::move(r));
  }
  db.add(records);
  return t;
}

}  // namespace

size_t chosen_candidate(const KernelCandidates& c, const scheduler::TuningDb& db,
                        const std::string& descriptor) {
  const std::map<std::string, double> in_model = in_model_times(db, c, descriptor);
  size_t chosen = c.records > 0 ? 0 : c.default_index;
  double best = -1;
  for (size_t i = 0; i < c.texts.size(); ++i) {
    const auto found = in_model.find(c.texts[i]);
    if (found == in_model.end() || (best >= 0 && found->second >= best)) continue;
    best = found->second;
    chosen = i;
  }
  return chosen;
}

InModelReport confirm_in_model(const std::vector<KernelCandidates>& kernels, const RunVariant& run,
                               scheduler::TuningDb& db, const std::string& descriptor) {
  InModelReport report;
  const bool confirmed = std::all_of(kernels.begin(), kernels.end(), [&](const auto& c) {
    return all_timed_in_model(c, in_model_times(db, c, descriptor));
  });
  if (confirmed || kernels.empty()) return report;
  report.measured = true;
  // Build v runs each kernel's record v (cycling through fewer), then one runs -O0's.
  size_t most_records = 0;
  for (const KernelCandidates& c : kernels) most_records = std::max(most_records, c.records);
  std::vector<size_t> choice(kernels.size());
  for (size_t v = 0; v <= most_records; ++v) {
    for (size_t k = 0; k < kernels.size(); ++k) {
      const KernelCandidates& c = kernels[k];
      choice[k] = v == most_records || c.records == 0 ? c.default_index : v % c.records;
    }
    const VariantTimes t = run_and_record(kernels, choice, run, db, descriptor);
    if (v == 0) report.records_run = t.run_seconds;
    if (v == most_records) report.default_run = t.run_seconds;
    ++report.builds;
  }
  // The build the model ships, timed too: its kernels' records gain a sample.
  for (size_t k = 0; k < kernels.size(); ++k)
    choice[k] = chosen_candidate(kernels[k], db, descriptor);
  report.chosen_run = run_and_record(kernels, choice, run, db, descriptor).run_seconds;
  ++report.builds;
  return report;
}

}  // namespace tlmc::tune
