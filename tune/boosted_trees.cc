#include "tune/boosted_trees.h"

#include "ir/diagnostic.h"

namespace tlmc::tune {

void check_xgboost(int rc, const char* what) {
  TLMC_ASSERT(rc == 0, "XGBoost " << what << ": " << XGBGetLastError());
}

FeatureMatrix::FeatureMatrix(const std::vector<std::vector<float>>& rows) {
  const size_t cols = rows.empty() ? 0 : rows[0].size();
  std::vector<float> flat;
  flat.reserve(rows.size() * cols);
  for (const std::vector<float>& r : rows) {
    TLMC_ASSERT(r.size() == cols, "feature rows of " << r.size() << " and " << cols);
    flat.insert(flat.end(), r.begin(), r.end());
  }
  // No value is missing: the marker is one no feature takes.
  check_xgboost(XGDMatrixCreateFromMat(flat.data(), rows.size(), cols, -1e30F, &handle_),
                "XGDMatrixCreateFromMat");
}

}  // namespace tlmc::tune
