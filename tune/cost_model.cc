#include "tune/cost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <map>
#include <string>

#include "ir/diagnostic.h"

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

void check(int rc, const char* what) {
  TLMC_ASSERT(rc == 0, "XGBoost " << what << ": " << XGBGetLastError());
}

// A matrix of feature rows, freed with the scope.
class Matrix {
 public:
  explicit Matrix(const std::vector<std::vector<float>>& rows) {
    const size_t cols = rows.empty() ? 0 : rows[0].size();
    std::vector<float> flat;
    flat.reserve(rows.size() * cols);
    for (const std::vector<float>& r : rows) {
      TLMC_ASSERT(r.size() == cols, "feature rows of " << r.size() << " and " << cols);
      flat.insert(flat.end(), r.begin(), r.end());
    }
    check(XGDMatrixCreateFromMat(flat.data(), rows.size(), cols, -1e30F, &handle_),
          "XGDMatrixCreateFromMat");
  }
  ~Matrix() { XGDMatrixFree(handle_); }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
  DMatrixHandle handle() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
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

  Matrix train(features_);
  check(XGDMatrixSetFloatInfo(train.handle(), "label", labels.data(), labels.size()),
        "XGDMatrixSetFloatInfo");
  BoosterHandle booster = nullptr;
  DMatrixHandle matrices[] = {train.handle()};
  check(XGBoosterCreate(matrices, 1, &booster), "XGBoosterCreate");
  for (const auto& [name, value] : kParams)
    check(XGBoosterSetParam(booster, name, value), "XGBoosterSetParam");
  for (int round = 0; round < kBoostRounds; ++round)
    check(XGBoosterUpdateOneIter(booster, round, train.handle()), "XGBoosterUpdateOneIter");
  if (booster_) XGBoosterFree(booster_);
  booster_ = booster;
  trained_on_ = features_.size();
  return true;
}

std::vector<float> CostModel::predict(const std::vector<std::vector<float>>& features) const {
  TLMC_ASSERT(ready(), "predict before the cost model was trained");
  if (features.empty()) return {};
  Matrix m(features);
  bst_ulong n = 0;
  const float* out = nullptr;
  check(XGBoosterPredict(booster_, m.handle(), 0, 0, 0, &n, &out), "XGBoosterPredict");
  TLMC_ASSERT(n == features.size(), "XGBoost predicted " << n << " of " << features.size());
  return std::vector<float>(out, out + n);
}

}  // namespace tlmc::tune
