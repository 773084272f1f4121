#include "driver/lm_verifier.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>

#include "driver/recorded_spaces.h"
#include "ir/diagnostic.h"
#include "ir/te.h"
#include "ir/te_text.h"
#include "lm/checkpoint.h"
#include "lm/lineage.h"
#include "scheduler/sketch.h"
#include "scheduler/tuning_db.h"
#include "tune/speedup_model.h"

namespace tlmc::driver {
namespace {

namespace fs = std::filesystem;

// "Slower" and "faster": by more than 3%, the timing noise of one measurement.
constexpr double kNoise = 1.03;
// A pair's label is clipped to e^±3 (20x): a failed-looking outlier teaches nothing more.
constexpr float kClip = 3.0F;
// Draws of drafts per workload in the cross-validation's simulation of -O1.
constexpr int kDraws = 8;

// One workload's measured records of one database, each paired with its -O0 record; the
// first pair is the -O0 record itself (label 0).
struct Workload {
  std::string key, family, target;
  std::vector<tune::SpeedupSample> pairs;
  std::vector<double> ratio;  // [pair] its time over the -O0 record's
  size_t fold = 0;
};

struct Counts {
  size_t groups = 0, held = 0, in_model = 0, no_program = 0, no_rule = 0, other_form = 0;
};

uint64_t fnv(const std::string& s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

// The records of one workload and target, fastest first, as pairs; nullopt where they
// cannot be (counted).
std::optional<Workload> pair_records(const std::vector<scheduler::TuningRecord>& records,
                                     Counts& counts) {
  const std::optional<ir::Target> target = ir::parse_descriptor(records[0].target);
  // A descriptor with words after it timed the kernel inside a model, not alone.
  if (!target || target->descriptor() != records[0].target || target->is_cuda()) {
    ++counts.in_model;
    return std::nullopt;
  }
  ir::TeProgram program;
  try {
    program = ir::te_from_text(records[0].workload);
  } catch (const ir::TeTextError&) {
    ++counts.no_program;
    return std::nullopt;
  }
  const RecordedSpaces spaces = recorded_spaces(program, *target, records);
  const std::vector<int64_t> rule_values = scheduler::default_values(spaces.sketches[0]);
  const std::string rule_text =
      scheduler::space_schedule_text(spaces.sketches, scheduler::SpacePoint{0, rule_values});
  const auto rule = std::find_if(records.begin(), records.end(),
                                 [&](const auto& r) { return r.schedule == rule_text; });
  if (rule == records.end()) {
    ++counts.no_rule;
    return std::nullopt;
  }
  Workload w;
  w.key = records[0].workload_key;
  w.target = records[0].target;
  const std::vector<float> reference =
      tune::schedule_features(program, spaces.target, spaces.sketches[0].decisions(rule_values));
  auto add = [&](const std::vector<float>& features, double seconds) {
    const double ratio = seconds / rule->seconds;
    w.pairs.push_back({tune::pair_features(features, reference),
                       std::clamp(static_cast<float>(-std::log(ratio)), -kClip, kClip), 1.0F});
    w.ratio.push_back(ratio);
  };
  add(reference, rule->seconds);
  for (size_t i = 0; i < records.size(); ++i) {
    if (records[i].schedule == rule_text) continue;
    if (!spaces.points[i]) {
      ++counts.other_form;
      continue;
    }
    const scheduler::SpacePoint& p = *spaces.points[i];
    try {
      add(tune::schedule_features(program, spaces.target,
                                  spaces.sketches[p.sketch].decisions(p.values)),
          records[i].seconds);
    } catch (const scheduler::InvalidDecision&) {
      ++counts.other_form;
    }
  }
  if (w.pairs.size() < 2) return std::nullopt;
  return w;
}

std::vector<Workload> read_workloads(const VerifierOptions& o,
                                     const std::map<std::string, std::string>& families,
                                     Counts& counts) {
  std::vector<Workload> out;
  for (const std::string& path : o.databases) {
    if (!fs::exists(path))
      throw Diagnostic({path},
                       "no tuning database here (give one that -O2, -O3 or `tlmc lm "
                       "demonstrate` wrote)");
    const scheduler::TuningDb db = scheduler::TuningDb::open(path, scheduler::DbAccess::Read);
    std::map<std::string, std::vector<scheduler::TuningRecord>> groups;
    for (scheduler::TuningRecord& r : db.all())
      if (r.status == scheduler::MeasureStatus::Ok)
        groups[r.workload_key + "\n" + r.target].push_back(std::move(r));
    for (const auto& [group, records] : groups) {
      ++counts.groups;
      const std::string& key = records[0].workload_key;
      const auto f = families.find(key);
      const std::string family = f == families.end() ? "" : f->second;
      // Where the hold-out names families, a workload of unknown family may be of one.
      if (o.held_out &&
          (o.held_out->holds(key, family) || (family.empty() && !o.held_out->families.empty()))) {
        ++counts.held;
        continue;
      }
      std::optional<Workload> w = pair_records(records, counts);
      if (!w) continue;
      w->family = family;
      out.push_back(std::move(*w));
    }
  }
  // Folds by shape family (by key where the family is unknown), dealt round the sorted
  // families: two families or more always fill two folds or more.
  std::map<std::string, size_t> fold_of;
  for (const Workload& w : out) fold_of[w.family.empty() ? w.key : w.family] = 0;
  size_t next = 0;
  for (auto& [group, fold] : fold_of) fold = next++ % static_cast<size_t>(o.folds);
  for (Workload& w : out) w.fold = fold_of[w.family.empty() ? w.key : w.family];
  return out;
}

// Each workload weighs the same in all, whatever its count of records; the mean weight is 1.
std::vector<tune::SpeedupSample> samples_of(const std::vector<const Workload*>& workloads) {
  size_t total = 0;
  for (const Workload* w : workloads) total += w->pairs.size();
  const double per_workload = static_cast<double>(total) / static_cast<double>(workloads.size());
  std::vector<tune::SpeedupSample> out;
  for (const Workload* w : workloads)
    for (tune::SpeedupSample s : w->pairs) {
      s.weight = static_cast<float>(per_workload / static_cast<double>(w->pairs.size()));
      out.push_back(std::move(s));
    }
  return out;
}

// -O1 simulated on held-out workloads at one threshold: per workload and draw, drafts are
// records drawn at random; the one predicted fastest is taken where its prediction exceeds
// the threshold, else the -O0 record.
struct Outcome {
  double geomean = 1;       // chosen time over -O0's
  double slower = 0;        // share of draws slower than -O0 by more than 3%
  double faster = 0;        // share faster by more than 3%
  double best_geomean = 1;  // the fastest of the drafts and -O0, as if measured
};

Outcome simulate(const std::vector<Workload>& workloads,
                 const std::vector<std::vector<float>>& predicted, int drafts, double threshold) {
  double log_sum = 0, best_log_sum = 0;
  size_t n = 0, slower = 0, faster = 0;
  for (size_t k = 0; k < workloads.size(); ++k) {
    const Workload& w = workloads[k];
    std::vector<size_t> others(w.pairs.size() - 1);
    for (size_t i = 0; i < others.size(); ++i) others[i] = i + 1;
    for (int d = 0; d < kDraws; ++d) {
      std::mt19937_64 rng(fnv(w.key) + static_cast<uint64_t>(d));
      std::shuffle(others.begin(), others.end(), rng);
      const size_t m = std::min(others.size(), static_cast<size_t>(drafts));
      size_t chosen = 0;
      double best = 1;
      for (size_t i = 0; i < m; ++i) {
        const size_t c = others[i];
        best = std::min(best, w.ratio[c]);
        if (chosen == 0 || predicted[k][c] > predicted[k][chosen]) chosen = c;
      }
      const double ratio = predicted[k][chosen] > threshold ? w.ratio[chosen] : 1.0;
      log_sum += std::log(ratio);
      best_log_sum += std::log(best);
      slower += ratio > kNoise;
      faster += ratio * kNoise < 1;
      ++n;
    }
  }
  const double count = static_cast<double>(n);
  return {std::exp(log_sum / count), static_cast<double>(slower) / count,
          static_cast<double>(faster) / count, std::exp(best_log_sum / count)};
}

void print_row(const char* label, const Outcome& o) {
  std::printf("| %s | %.3f | %.1f%% | %.1f%% | %.3f |\n", label, o.geomean, 100 * o.slower,
              100 * o.faster, o.best_geomean);
}

}  // namespace

int train_verifier(const VerifierOptions& o) {
  std::map<std::string, std::string> families;
  if (o.corpus) families = corpus_families(*o.corpus);
  Counts counts;
  const std::vector<Workload> workloads = read_workloads(o, families, counts);
  size_t pairs = 0;
  std::set<size_t> used_folds;
  for (const Workload& w : workloads) {
    pairs += w.pairs.size();
    used_folds.insert(w.fold);
  }
  std::fprintf(stderr,
               "tlmc lm verifier: %zu workloads, %zu measured pairs (left out of %zu: %zu held "
               "out, %zu timed in a model or on a GPU, %zu without their program, %zu without "
               "an -O0 record; %zu records not points of the spaces)\n",
               workloads.size(), pairs, counts.groups, counts.held, counts.in_model,
               counts.no_program, counts.no_rule, counts.other_form);
  if (used_folds.size() < 2)
    throw Diagnostic({}, "tlmc lm verifier: the records are of " +
                             std::to_string(workloads.size()) +
                             " workload(s) in fewer than two shape families: too few to "
                             "cross-validate; measure more (tlmc lm demonstrate)");

  // Cross-validation: each fold's workloads predicted by a model trained on the others.
  std::vector<std::vector<float>> predicted(workloads.size());
  for (int fold = 0; fold < o.folds; ++fold) {
    std::vector<const Workload*> train;
    std::vector<size_t> test;
    for (size_t k = 0; k < workloads.size(); ++k) {
      if (workloads[k].fold == static_cast<size_t>(fold))
        test.push_back(k);
      else
        train.push_back(&workloads[k]);
    }
    if (test.empty() || train.empty()) continue;
    const tune::SpeedupModel model = tune::SpeedupModel::fit(samples_of(train), {});
    for (size_t k : test) {
      std::vector<std::vector<float>> rows;
      for (const tune::SpeedupSample& s : workloads[k].pairs) rows.push_back(s.features);
      predicted[k] = model.predict(rows);
    }
    std::fprintf(stderr, "tlmc lm verifier: fold %d/%d: %zu workloads held out\n", fold + 1,
                 o.folds, test.size());
  }
  // Sign agreement on pairs that differ by more than 10%.
  size_t agree = 0, differ = 0;
  for (size_t k = 0; k < workloads.size(); ++k)
    for (size_t i = 1; i < workloads[k].pairs.size(); ++i) {
      const float label = workloads[k].pairs[i].log_speedup;
      if (std::abs(label) < std::log(1.1F)) continue;
      ++differ;
      agree += (label > 0) == (predicted[k][i] > 0);
    }

  // The smallest threshold at which -O1 makes few enough workloads slower.
  const Outcome unchecked = simulate(workloads, predicted, o.drafts, -1e9);
  double chosen = 1.0;
  for (int t = 0; t <= 50; ++t)
    if (simulate(workloads, predicted, o.drafts, 0.02 * t).slower <= o.max_slower) {
      chosen = 0.02 * t;
      break;
    }
  std::printf(
      "Cross-validated by shape family (%d folds): %zu workloads, %d drafts drawn %d "
      "times each from their records. Of the pairs that differ by more than 10%%, the "
      "model orders %.1f%% right.\n\n",
      o.folds, workloads.size(), o.drafts, kDraws,
      differ ? 100.0 * static_cast<double>(agree) / static_cast<double>(differ) : 0.0);
  std::printf(
      "| threshold (ln speedup) | -O1 time / -O0 (geomean) | slower | faster | best "
      "of drafts and -O0 |\n|---|---|---|---|---|\n");
  print_row("none (the first draft drawn)", unchecked);
  for (double t : {0.0, 0.05, 0.1, 0.2, 0.3, 0.5}) {
    char label[32];
    std::snprintf(label, sizeof label, "%.2f", t);
    print_row(label, simulate(workloads, predicted, o.drafts, t));
  }
  char label[48];
  std::snprintf(label, sizeof label, "**%.2f (chosen)**", chosen);
  print_row(label, simulate(workloads, predicted, o.drafts, chosen));

  // The model of all of them, and its lineage.
  lm::Lineage lineage;
  lineage.stages.push_back({"verifier", {}});
  std::vector<const Workload*> all;
  std::string target;
  for (const Workload& w : workloads) {
    all.push_back(&w);
    lineage.stages[0].keys[w.key] = w.family;
    if (target.empty()) target = w.target;
  }
  tune::SpeedupModelInfo info;
  info.target = target;
  info.lineage_digest = lm::lineage_digest(lineage);
  info.workloads = static_cast<uint32_t>(lineage.stages[0].keys.size());
  info.threshold = static_cast<float>(chosen);
  const tune::SpeedupModel model = tune::SpeedupModel::fit(samples_of(all), info);
  lm::write_lineage(o.output + ".lineage", lineage);
  model.save(o.output);
  std::fprintf(stderr, "tlmc lm verifier: wrote %s (threshold %.2f) and its lineage\n",
               o.output.c_str(), chosen);
  return 0;
}

}  // namespace tlmc::driver
