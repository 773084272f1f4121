#include "tune/speedup_model.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "ir/diagnostic.h"
#include "lm/binary_file.h"
#include "scheduler/lower_schedule.h"
#include "tune/boosted_trees.h"
#include "tune/loop_features.h"

extern "C" const char tlmc_default_speedup_model_begin[];
extern "C" const char tlmc_default_speedup_model_end[];

namespace tlmc::tune {
namespace {

constexpr char kMagic[8] = {'T', 'L', 'M', 'C', 'S', 'P', 'D', '1'};
constexpr const char* kNoun = "speedup model";
constexpr int kBoostRounds = 300;
// Deeper trees than the search's online model (tune/cost_model.cc): this one learns once,
// from thousands of workloads, a relation between two programs rather than one program's
// throughput. Row and column subsampling (seeded) keep it from memorising a workload.
const std::pair<const char*, const char*> kParams[] = {
    {"objective", "reg:squarederror"},
    {"max_depth", "7"},
    {"eta", "0.08"},
    {"min_child_weight", "4"},
    {"subsample", "0.8"},
    {"colsample_bytree", "0.6"},
    {"lambda", "2"},
    {"seed", "1"},
    {"verbosity", "0"},
    {"tree_method", "hist"},
};

std::shared_ptr<void> new_booster(const DMatrixHandle* matrices, bst_ulong count) {
  BoosterHandle b = nullptr;
  check_xgboost(XGBoosterCreate(matrices, count, &b), "XGBoosterCreate");
  return std::shared_ptr<void>(b, [](void* h) { XGBoosterFree(h); });
}

size_t pair_width() { return 2 * loop_feature_names().size(); }

}  // namespace

std::vector<float> schedule_features(const ir::TeProgram& program, const ir::Target& target,
                                     const std::vector<scheduler::Decision>& schedule) {
  const ir::LoopProgram loops =
      scheduler::lower_schedule(scheduler::apply_schedule(program, schedule), "candidate");
  return loop_features(loops, target);
}

std::vector<float> pair_features(const std::vector<float>& candidate,
                                 const std::vector<float>& reference) {
  TLMC_ASSERT(candidate.size() == reference.size(),
              "pair of " << candidate.size() << " and " << reference.size() << " features");
  std::vector<float> f = candidate;
  for (size_t i = 0; i < reference.size(); ++i) f.push_back(candidate[i] - reference[i]);
  return f;
}

SpeedupModel SpeedupModel::fit(const std::vector<SpeedupSample>& samples, SpeedupModelInfo info) {
  TLMC_ASSERT(!samples.empty(), "a speedup model fitted on nothing");
  std::vector<std::vector<float>> rows;
  std::vector<float> labels, weights;
  for (const SpeedupSample& s : samples) {
    rows.push_back(s.features);
    labels.push_back(s.log_speedup);
    weights.push_back(s.weight);
  }
  FeatureMatrix train(rows);
  check_xgboost(XGDMatrixSetFloatInfo(train.handle(), "label", labels.data(), labels.size()),
                "XGDMatrixSetFloatInfo");
  check_xgboost(XGDMatrixSetFloatInfo(train.handle(), "weight", weights.data(), weights.size()),
                "XGDMatrixSetFloatInfo");
  const DMatrixHandle matrices[] = {train.handle()};
  SpeedupModel m;
  m.booster_ = new_booster(matrices, 1);
  for (const auto& [name, value] : kParams)
    check_xgboost(XGBoosterSetParam(m.booster_.get(), name, value), "XGBoosterSetParam");
  // The hist method gives the same trees on any number of threads.
  const std::string threads = std::to_string(std::max(1U, std::thread::hardware_concurrency()));
  check_xgboost(XGBoosterSetParam(m.booster_.get(), "nthread", threads.c_str()),
                "XGBoosterSetParam");
  for (int round = 0; round < kBoostRounds; ++round)
    check_xgboost(XGBoosterUpdateOneIter(m.booster_.get(), round, train.handle()),
                  "XGBoosterUpdateOneIter");
  check_xgboost(XGBoosterSetParam(m.booster_.get(), "nthread", "1"), "XGBoosterSetParam");
  m.info_ = std::move(info);
  return m;
}

std::string SpeedupModel::to_bytes() const {
  bst_ulong length = 0;
  const char* trees = nullptr;
  check_xgboost(XGBoosterSaveModelToBuffer(booster_.get(), R"({"format": "ubj"})", &length, &trees),
                "XGBoosterSaveModelToBuffer");
  lm::BinaryWriter w(kMagic, kSpeedupModelVersion, kNoun);
  w.put<uint32_t>(kLoopFeatureVersion);
  w.put<uint32_t>(static_cast<uint32_t>(pair_width()));
  w.put_string(info_.target);
  w.put_string(info_.lineage_digest);
  w.put<uint32_t>(info_.workloads);
  w.put<float>(info_.threshold);
  w.put_string(std::string_view(trees, length));
  return w.bytes();
}

void SpeedupModel::save(const std::string& path) const {
  const std::string error = lm::write_whole_file(path, to_bytes(), kNoun + std::string(" file"));
  if (!error.empty()) throw lm::CheckpointError(path + ": " + error);
}

SpeedupModel SpeedupModel::from_bytes(const std::string& name, std::string bytes) {
  lm::BinaryReader r(name, std::move(bytes), kMagic, kNoun);
  return read(r, name);
}

SpeedupModel SpeedupModel::load(const std::string& path) {
  lm::BinaryReader r(path, kMagic, kNoun, "give a file that `tlmc lm verifier` wrote");
  return read(r, path);
}

SpeedupModel SpeedupModel::read(lm::BinaryReader& r, const std::string& name) {
  const auto version = r.get<uint32_t>();
  if (version != kSpeedupModelVersion)
    throw lm::CheckpointError(name + ": a speedup model of format " + std::to_string(version) +
                              ", this tlmc reads format " + std::to_string(kSpeedupModelVersion) +
                              "; train it again");
  const auto features = r.get<uint32_t>();
  const auto width = r.get<uint32_t>();
  if (features != static_cast<uint32_t>(kLoopFeatureVersion) || width != pair_width())
    throw lm::CheckpointError(name + ": a speedup model of loop features version " +
                              std::to_string(features) + " (" + std::to_string(width) +
                              " values), this tlmc computes version " +
                              std::to_string(kLoopFeatureVersion) + " (" +
                              std::to_string(pair_width()) + "); train it again");
  SpeedupModel m;
  m.info_.target = r.string();
  m.info_.lineage_digest = r.string();
  m.info_.workloads = r.get<uint32_t>();
  m.info_.threshold = r.get<float>();
  const std::string trees = r.string();
  r.expect_end();
  m.booster_ = new_booster(nullptr, 0);
  if (XGBoosterLoadModelFromBuffer(m.booster_.get(), trees.data(), trees.size()) != 0)
    throw lm::CheckpointError(name + ": the speedup model's trees do not read back (" +
                              XGBGetLastError() + ")");
  check_xgboost(XGBoosterSetParam(m.booster_.get(), "nthread", "1"), "XGBoosterSetParam");
  return m;
}

std::vector<float> SpeedupModel::predict(const std::vector<std::vector<float>>& pairs) const {
  if (pairs.empty()) return {};
  FeatureMatrix m(pairs);
  bst_ulong n = 0;
  const float* out = nullptr;
  check_xgboost(XGBoosterPredict(booster_.get(), m.handle(), 0, 0, 0, &n, &out),
                "XGBoosterPredict");
  TLMC_ASSERT(n == pairs.size(), "XGBoost predicted " << n << " of " << pairs.size());
  return std::vector<float>(out, out + n);
}

SpeedupModel SpeedupModel::with_threshold(float threshold) const {
  SpeedupModel m = *this;
  m.info_.threshold = threshold;
  return m;
}

const SpeedupModel* default_speedup_model() {
  // Never destroyed: XGBoost's own state may be gone by the time static objects are.
  static const SpeedupModel* bundled = []() -> const SpeedupModel* {
    const std::string bytes(tlmc_default_speedup_model_begin, tlmc_default_speedup_model_end);
    if (bytes.empty()) return nullptr;
    try {
      return new SpeedupModel(SpeedupModel::from_bytes("the bundled speedup model", bytes));
    } catch (const lm::CheckpointError& e) {
      fail_assert("the bundled speedup model loads", __FILE__, __LINE__, e.what());
    }
  }();
  return bundled;
}

DraftVerdict verify_drafts(const SpeedupModel& model, const ir::TeProgram& program,
                           const ir::Target& target,
                           const std::vector<scheduler::Decision>& reference,
                           const std::vector<std::vector<scheduler::Decision>>& drafts) {
  DraftVerdict v;
  if (drafts.empty()) return v;
  const std::vector<float> base = schedule_features(program, target, reference);
  std::vector<std::vector<float>> rows;
  for (const std::vector<scheduler::Decision>& d : drafts)
    rows.push_back(pair_features(schedule_features(program, target, d), base));
  v.predicted = model.predict(rows);
  const size_t best = static_cast<size_t>(std::max_element(v.predicted.begin(), v.predicted.end()) -
                                          v.predicted.begin());
  if (v.predicted[best] > model.info().threshold) v.chosen = best;
  return v;
}

}  // namespace tlmc::tune
