// Every value a space lists has a token in the tensor language: tile levels of axes longer
// than kLargestSpaceValue stop at their largest divisor, or tile, within it.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "scheduler/schedule_support.h"
#include "scheduler/sketch_rules.h"
#include "scheduler/sketch_steps.h"

namespace tlmc::scheduler {
namespace {

TEST(SpaceValues, DivisorsStopAtTheLargestSpaceValue) {
  EXPECT_EQ(divisors(8192, 8192).back(), 4096);
  EXPECT_EQ(divisors(50257, 50257), (std::vector<int64_t>{1, 29, 1733}));  // 29 x 1733
  EXPECT_EQ(divisors(4096, 4096).back(), kLargestSpaceValue);
}

TEST(SpaceValues, TilesOfferWholeVectorsWhereNoDivisorDoes) {
  EXPECT_EQ(tile_sizes(50257, 64, 16), (std::vector<int64_t>{1, 2, 4, 8, 16, 29, 32, 48, 64}));
  EXPECT_EQ(tile_sizes(12, 64, 8), (std::vector<int64_t>{1, 2, 3, 4, 6, 8, 12}));
  EXPECT_EQ(tile_sizes(8192, 8192, 16).back(), kLargestSpaceValue);
  EXPECT_EQ(tile_sizes(0, 64, 16), (std::vector<int64_t>{1}));
}

TEST(SpaceValues, RandomPointsOfLongAxesStayWithinTheLargestValue) {
  const ir::Target target = *ir::parse_target("x86-64-avx512");
  const Sketches sketches =
      generate_sketches(test::program_of(test::matmul_yaml(2, 12288, 8192)), target);
  std::mt19937_64 rng(1);
  int64_t largest = 0;
  for (int draw = 0; draw < 200; ++draw) {
    const SpacePoint p = random_point(sketches, rng);
    largest = std::max(largest, *std::max_element(p.values.begin(), p.values.end()));
  }
  EXPECT_LE(largest, kLargestSpaceValue);
  EXPECT_GE(largest, 1024) << "long tiles are still drawn";
}

}  // namespace
}  // namespace tlmc::scheduler
