// XGBoost's C API as the cost models use it (tune/cost_model.h, tune/speedup_model.h): a
// call checked as a compiler bug where it fails, and a matrix of feature rows freed with its
// scope.
#pragma once

#include <xgboost/c_api.h>

#include <vector>

namespace tlmc::tune {

// An internal assertion naming `what` and XGBoost's message unless `rc` is 0.
void check_xgboost(int rc, const char* what);

class FeatureMatrix {
 public:
  // Rows of equal length (an internal assertion otherwise).
  explicit FeatureMatrix(const std::vector<std::vector<float>>& rows);
  ~FeatureMatrix() { XGDMatrixFree(handle_); }
  FeatureMatrix(const FeatureMatrix&) = delete;
  FeatureMatrix& operator=(const FeatureMatrix&) = delete;
  DMatrixHandle handle() const { return handle_; }

 private:
  DMatrixHandle handle_ = nullptr;
};

}  // namespace tlmc::tune
