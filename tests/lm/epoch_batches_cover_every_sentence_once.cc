// The training batches of an epoch: every sentence in exactly one, none over the batch size,
// the count an epoch's steps assume, the same batches from the same seed and epoch (what
// resuming relies on), and less padding than a plain shuffle's batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "lm/train.h"

namespace tlmc::lm {
namespace {

size_t padded_tokens(const std::vector<std::vector<size_t>>& batches,
                     const std::vector<size_t>& lengths) {
  size_t total = 0;
  for (const std::vector<size_t>& b : batches) {
    size_t longest = 0;
    for (size_t i : b) longest = std::max(longest, lengths[i]);
    total += longest * b.size();
  }
  return total;
}

TEST(EpochBatches, CoverEverySentenceOnceAndPadLessThanAShuffle) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<size_t> length(100, 650);
  for (const size_t n : {1u, 15u, 16u, 17u, 1000u, 7368u}) {
    std::vector<size_t> lengths(n);
    for (size_t& l : lengths) l = length(rng);
    const std::vector<std::vector<size_t>> batches = epoch_batches(lengths, 16, 3, 5);
    EXPECT_EQ(batches.size(), (n + 15) / 16) << n;
    std::vector<size_t> seen;
    for (const std::vector<size_t>& b : batches) {
      EXPECT_FALSE(b.empty());
      EXPECT_LE(b.size(), 16u);
      seen.insert(seen.end(), b.begin(), b.end());
    }
    std::sort(seen.begin(), seen.end());
    std::vector<size_t> all(n);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(seen, all) << n;
    EXPECT_EQ(epoch_batches(lengths, 16, 3, 5), batches) << "the seed and epoch decide";
    if (n > 16) {
      EXPECT_NE(epoch_batches(lengths, 16, 3, 6), batches) << "another epoch's";
    }
    if (n < 1000) continue;
    // Batches of a plain shuffle, for comparison.
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<std::vector<size_t>> plain;
    for (size_t b = 0; b < n; b += 16)
      plain.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(b),
                         order.begin() + static_cast<std::ptrdiff_t>(std::min(n, b + 16)));
    const size_t real = std::accumulate(lengths.begin(), lengths.end(), size_t{0});
    EXPECT_LT(padded_tokens(batches, lengths) - real, (padded_tokens(plain, lengths) - real) / 4)
        << "sorting windows of batches by length removes most of the padding";
  }
}

}  // namespace
}  // namespace tlmc::lm
