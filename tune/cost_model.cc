#include "tune/cost_model.h"

#include <algorithm>
#include <map>
#include <string>

#include "ir/diagnostic.h"
#include "tune/boosted_trees.h"

namespace tlmc::tune {
namespace {

// Fewer samples than this teach nothing: the search samples at random until then.
constexpr size_t kMinSamples = 16;
constexpr int kBoostRounds = 60;
// Trees of depth 6 with a moderate learning rate, as cost models for tensor programs use
// (AutoTVM, Ansor); one thread keeps the model deterministic and leaves the cores to the
// compilations that run beside it.
const std::pair<const char*, const char*> kParams[] = {
    {"objective", "reg:squarederror"},
    {"max_depth", "6"},
    {"eta", "0.2"},
    {"min_child_weight", "1"},
    {"gamma", "0.0001"},
    {"lambda", "1"},
    {"nthread", "1"},
    {"seed", "1"},
    {"verbosity", "0"},
    {"tree_method", "hist"},
};

}  // namespace

CostModel::CostModel() = default;

CostModel::~CostModel() {
  if (booster_) XGBoosterFree(booster_);
}

void CostModel::add(int task, std::vector<float> features, double seconds) {
  features_.push_back(std::move(features));
  task_.push_back(task);
  seconds_.push_back(seconds);
}

bool CostModel::train() {
  if (features_.size() < kMinSamples || features_.size() == trained_on_) return ready();
  // Each sample's throughput relative to the best of its task.
  std::map<int, double> best;
  for (size_t i = 0; i < seconds_.size(); ++i)
    if (seconds_[i] > 0 && (best[task_[i]] == 0 || seconds_[i] < best[task_[i]]))
      best[task_[i]] = seconds_[i];
  std::vector<float> labels;
  for (size_t i = 0; i < seconds_.size(); ++i)
    labels.push_back(seconds_[i] > 0 ? static_cast<float>(best[task_[i]] / seconds_[i]) : 0.0F);

  FeatureMatrix train(features_);
  check_xgboost(XGDMatrixSetFloatInfo(train.handle(), "label", labels.data(), labels.size()),
                "XGDMatrixSetFloatInfo");
  BoosterHandle booster = nullptr;
  DMatrixHandle matrices[] = {train.handle()};
  check_xgboost(XGBoosterCreate(matrices, 1, &booster), "XGBoosterCreate");
  for (const auto& [name, value] : kParams)
    check_xgboost(XGBoosterSetParam(booster, name, value), "XGBoosterSetParam");
  for (int round = 0; round < kBoostRounds; ++round)
    check_xgboost(XGBoosterUpdateOneIter(booster, round, train.handle()), "XGBoosterUpdateOneIter");
  if (booster_) XGBoosterFree(booster_);
  booster_ = booster;
  trained_on_ = features_.size();
  return true;
}

std::vector<float> CostModel::predict(const std::vector<std::vector<float>>& features) const {
  TLMC_ASSERT(ready(), "predict before the cost model was trained");
  if (features.empty()) return {};
  FeatureMatrix m(features);
  bst_ulong n = 0;
  const float* out = nullptr;
  check_xgboost(XGBoosterPredict(booster_, m.handle(), 0, 0, 0, &n, &out), "XGBoosterPredict");
  TLMC_ASSERT(n == features.size(), "XGBoost predicted " << n << " of " << features.size());
  return std::vector<float>(out, out + n);
}

}  // namespace tlmc::tune
