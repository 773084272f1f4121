// The search's learned cost model: gradient-boosted trees (XGBoost's C API) from loop-nest
// features (tune/loop_features.h) to a candidate's throughput relative to the best measured
// schedule of its task (1 the best, 0 a failure), retrained as measurements arrive. One model
// serves every task of a run: throughput is normalised per task, so what one subgraph
// teaches about tiling and vectorising carries over to the others.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tlmc::tune {

class CostModel {
 public:
  CostModel();
  ~CostModel();
  CostModel(const CostModel&) = delete;
  CostModel& operator=(const CostModel&) = delete;

  // A measured candidate of task `task`: its features and its time (0 when it failed).
  void add(int task, std::vector<float> features, double seconds);
  // Samples added so far.
  size_t samples() const { return features_.size(); }
  // Trains anew on every sample when samples arrived since the last training; a no-op
  // with too few samples to learn from. Returns whether a model is now ready.
  bool train();
  bool ready() const { return booster_ != nullptr; }
  // Predicted relative throughput, one per feature vector (higher is faster); ready() only.
  std::vector<float> predict(const std::vector<std::vector<float>>& features) const;

 private:
  std::vector<std::vector<float>> features_;
  std::vector<int> task_;
  std::vector<double> seconds_;
  size_t trained_on_ = 0;  // samples() at the last training
  void* booster_ = nullptr;
};

}  // namespace tlmc::tune
