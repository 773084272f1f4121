// The cost model (XGBoost's gradient-boosted trees) learns which samples are fast: trained on
// samples of two tasks whose times follow their features (one task ten times slower than
// the other, which the per-task normalisation removes), it ranks samples it has not seen
// in the order of their throughput.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "tune/cost_model.h"

namespace tlmc::tune {
namespace {

struct Sample {
  std::vector<float> features;
  double seconds;
};

Sample sample(std::mt19937_64& rng, int task) {
  std::uniform_real_distribution<float> u(0, 1);
  Sample s;
  for (int i = 0; i < 12; ++i) s.features.push_back(u(rng));
  const double f0 = s.features[0], f1 = s.features[1];
  s.seconds = (1 + 4 * f0 + 2 * f1 * f1) * (task == 0 ? 1 : 10);
  return s;
}

// Spearman's rank correlation of two series.
double rank_correlation(const std::vector<double>& a, const std::vector<double>& b) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<size_t> idx(v.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](size_t x, size_t y) { return v[x] < v[y]; });
    std::vector<double> r(v.size());
    for (size_t i = 0; i < idx.size(); ++i) r[idx[i]] = static_cast<double>(i);
    return r;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  double d2 = 0;
  for (size_t i = 0; i < ra.size(); ++i) d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  return 1 - 6 * d2 / (n * (n * n - 1));
}

TEST(CostModel, RanksUnseenSamplesByThroughput) {
  std::mt19937_64 rng(5);
  CostModel model;
  for (int i = 0; i < 10; ++i) {
    const Sample s = sample(rng, 0);
    model.add(0, s.features, s.seconds);
  }
  EXPECT_FALSE(model.train()) << "too few samples to learn from";
  for (int i = 0; i < 300; ++i) {
    const Sample s = sample(rng, i % 2);
    model.add(i % 2, s.features, s.seconds);
  }
  model.add(0, std::vector<float>(12, 0.5F), 0);  // a failed candidate: throughput 0
  ASSERT_TRUE(model.train());
  ASSERT_TRUE(model.ready());

  std::vector<std::vector<float>> unseen;
  std::vector<double> throughput;
  for (int i = 0; i < 100; ++i) {
    const Sample s = sample(rng, 1);
    unseen.push_back(s.features);
    throughput.push_back(1 / s.seconds);
  }
  const std::vector<float> predicted = model.predict(unseen);
  ASSERT_EQ(predicted.size(), unseen.size());
  const std::vector<double> p(predicted.begin(), predicted.end());
  EXPECT_GT(rank_correlation(p, throughput), 0.8);
}

}  // namespace
}  // namespace tlmc::tune
