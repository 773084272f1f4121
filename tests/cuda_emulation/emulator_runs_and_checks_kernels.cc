// The CUDA-on-CPU emulator (runtime/cuda_emulation/cuda_runtime.h): hand-written kernels run
// to the right results with threads and blocks in forward and in reverse order, and the
// mistakes it exists to catch stop the launch with the kernel's name: a deleted barrier (a
// shared-memory race), a barrier some threads skip, two different barriers, a shuffle with
// lanes gone, shared memory read before its block wrote it, a shuffle whose mask is not
// its warp's lanes, over 48 KiB of dynamic shared memory without the opt-in, a grid past
// its limits, a read past an allocation. A failed launch is sticky, as on a GPU.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cuda_emulation/kernels.cuh"

namespace {

class Emulator : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    tlmc_emulation_reset();
    tlmc_emulation_set_reverse(GetParam());
  }
  void TearDown() override {
    tlmc_emulation_reset();
    tlmc_emulation_set_reverse(false);
  }
};

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST_P(Emulator, TiledMatmulComputesTheProduct) {
  const int m = 16, n = 24, k = 32;
  std::vector<float> a = random_floats(m * k, 1), b = random_floats(k * n, 2), c(m * n, 0.0f);
  ASSERT_EQ(TLMC_LAUNCH(matmul_tiled<true>, dim3(n / kTile, m / kTile), dim3(kTile, kTile), 0,
                        nullptr, a.data(), b.data(), c.data(), m, n, k),
            cudaSuccess)
      << tlmc_emulation_message();
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float want = 0.0f;
      for (int p = 0; p < k; ++p) want += a[i * k + p] * b[p * n + j];
      EXPECT_NEAR(c[i * n + j], want, 1e-4f) << i << "," << j;
    }
}

TEST_P(Emulator, ADeletedBarrierIsASharedMemoryRace) {
  const int m = 8, n = 8, k = 16;
  std::vector<float> a = random_floats(m * k, 1), b = random_floats(k * n, 2), c(m * n, 0.0f);
  EXPECT_EQ(TLMC_LAUNCH(matmul_tiled<false>, dim3(1, 1), dim3(kTile, kTile), 0, nullptr, a.data(),
                        b.data(), c.data(), m, n, k),
            cudaErrorLaunchFailure);
  const std::string message = tlmc_emulation_message();
  EXPECT_EQ(message.rfind("kernel matmul_tiled<false>, block (0,0,0): shared-memory race on ", 0),
            0u)
      << message;
  EXPECT_NE(message.find("with no __syncthreads() between"), std::string::npos) << message;
}

TEST_P(Emulator, RowSumsThroughShufflesAndSharedMemory) {
  const int rows = 5, columns = 333;
  std::vector<float> in = random_floats(rows * columns, 3), out(rows, 0.0f);
  for (unsigned threads : {32u, 64u, 256u}) {
    ASSERT_EQ(
        TLMC_LAUNCH(row_sum, dim3(rows), dim3(threads), 0, nullptr, in.data(), out.data(), columns),
        cudaSuccess)
        << tlmc_emulation_message();
    for (int r = 0; r < rows; ++r) {
      double want = 0;
      for (int j = 0; j < columns; ++j) want += in[r * columns + j];
      EXPECT_NEAR(out[r], want, 1e-3) << threads << " threads, row " << r;
    }
  }
}

TEST_P(Emulator, DynamicSharedMemoryHoldsTheLaunchsBytes) {
  std::vector<float> data(4 * 32);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  ASSERT_EQ(
      TLMC_LAUNCH(reverse_blocks, dim3(4), dim3(32), 32 * sizeof(float), nullptr, data.data()),
      cudaSuccess)
      << tlmc_emulation_message();
  for (int b = 0; b < 4; ++b)
    for (int t = 0; t < 32; ++t) EXPECT_EQ(data[b * 32 + t], b * 32 + 31 - t);
  // Too little dynamic shared memory for the block: reading past it stops the launch.
  EXPECT_EQ(
      TLMC_LAUNCH(reverse_blocks, dim3(1), dim3(32), 16 * sizeof(float), nullptr, data.data()),
      cudaErrorLaunchFailure);
  EXPECT_NE(std::string(tlmc_emulation_message())
                .find("shared array staged read or written at " +
                      std::to_string(GetParam() ? 31 : 16) + ", outside its 16 elements"),
            std::string::npos)
      << tlmc_emulation_message();
}

TEST_P(Emulator, AtomicsCountEveryValue) {
  std::vector<int> values(1000), counts(4, 0);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<int>(i * 7);
  ASSERT_EQ(
      TLMC_LAUNCH(histogram, dim3(8), dim3(128), 0, nullptr, values.data(), counts.data(), 1000),
      cudaSuccess);
  EXPECT_EQ(counts, (std::vector<int>{250, 250, 250, 250}));
}

TEST_P(Emulator, ABarrierSomeThreadsSkipStopsTheLaunch) {
  std::vector<float> data(64, 1.0f);
  EXPECT_EQ(TLMC_LAUNCH(early_return, dim3(1), dim3(64), 0, nullptr, data.data(), 40),
            cudaErrorLaunchFailure);
  const std::string message = tlmc_emulation_message();
  EXPECT_EQ(message.rfind("kernel early_return, block (0,0,0): thread (", 0), 0u) << message;
  EXPECT_NE(message.find("returned without the __syncthreads() of line"), std::string::npos)
      << message;
  EXPECT_NE(message.find("that 40 threads of its block wait at"), std::string::npos) << message;
}

TEST_P(Emulator, TwoDifferentBarriersStopTheLaunch) {
  std::vector<float> data(64, 0.0f);
  EXPECT_EQ(TLMC_LAUNCH(split_barriers, dim3(1), dim3(64), 0, nullptr, data.data()),
            cudaErrorLaunchFailure);
  EXPECT_NE(std::string(tlmc_emulation_message()).find("waits at the __syncthreads() of line"),
            std::string::npos)
      << tlmc_emulation_message();
}

TEST_P(Emulator, AFailedLaunchIsSticky) {
  std::vector<float> data(64, 1.0f);
  ASSERT_EQ(TLMC_LAUNCH(early_return, dim3(1), dim3(64), 0, nullptr, data.data(), 40),
            cudaErrorLaunchFailure);
  float x = 0.0f;
  EXPECT_EQ(cudaMemcpy(&x, data.data(), 4, cudaMemcpyDeviceToHost), cudaErrorLaunchFailure);
  EXPECT_EQ(TLMC_LAUNCH(early_return, dim3(1), dim3(64), 0, nullptr, data.data(), 64),
            cudaErrorLaunchFailure)
      << "every later launch fails too";
  EXPECT_EQ(cudaGetLastError(), cudaErrorLaunchFailure);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorLaunchFailure);
  tlmc_emulation_reset();
  EXPECT_EQ(TLMC_LAUNCH(early_return, dim3(1), dim3(64), 0, nullptr, data.data(), 64), cudaSuccess)
      << tlmc_emulation_message();
}

TEST_P(Emulator, ABlockTooLargeDoesNotLaunch) {
  std::vector<float> data(64, 1.0f);
  EXPECT_EQ(TLMC_LAUNCH(early_return, dim3(1), dim3(2048), 0, nullptr, data.data(), 64),
            cudaErrorInvalidConfiguration);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "a refused launch is not sticky";
}

// 16-byte copies into shared memory move their four elements, checked like any other shared
// access; one whose global address is not a multiple of 16 stops the launch, as on a GPU.
TEST_P(Emulator, SixteenByteCopiesMustBeAligned) {
  alignas(16) float in[132];
  for (int i = 0; i < 132; ++i) in[i] = static_cast<float>(i);
  std::vector<float> out(128, 0.0f);
  ASSERT_EQ(TLMC_LAUNCH(copy_fours, dim3(1), dim3(32), 0, nullptr, in, out.data(), 4), cudaSuccess)
      << tlmc_emulation_message();
  for (int i = 0; i < 128; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], 131 - i);
  EXPECT_EQ(TLMC_LAUNCH(copy_fours, dim3(1), dim3(32), 0, nullptr, in, out.data(), 2),
            cudaErrorLaunchFailure);
  const std::string message = tlmc_emulation_message();
  EXPECT_EQ(
      message.rfind("kernel copy_fours, block (0,0,0): a 16-byte copy from global element ", 0), 0u)
      << message;
  EXPECT_NE(message.find("is not aligned to 16 bytes"), std::string::npos) << message;
  tlmc_emulation_reset();
}

TEST_P(Emulator, SharedMemoryReadBeforeItsBlockWroteItStopsTheLaunch) {
  std::vector<float> out(64, 0.0f);
  ASSERT_EQ(TLMC_LAUNCH(read_unwritten, dim3(2), dim3(32), 0, nullptr, out.data()), cudaSuccess)
      << tlmc_emulation_message();
  // The second block's threads wrote their elements again: what the first block left there
  // is not what they read.
  EXPECT_EQ(out[31], 31.0f);
  EXPECT_EQ(TLMC_LAUNCH(read_unwritten, dim3(1), dim3(64), 0, nullptr, out.data()),
            cudaErrorLaunchFailure);
  const std::string message = tlmc_emulation_message();
  EXPECT_NE(message.find("shared array staged["), std::string::npos) << message;
  EXPECT_NE(message.find("before any thread of its block wrote it"), std::string::npos) << message;
  tlmc_emulation_reset();
}

TEST_P(Emulator, AShuffleMustNameExactlyTheLanesOfItsWarp) {
  std::vector<float> data(48);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  ASSERT_EQ(TLMC_LAUNCH(swap_halves, dim3(1), dim3(32), 0, nullptr, data.data(), 0xffffffffu),
            cudaSuccess)
      << tlmc_emulation_message();
  EXPECT_EQ(data[0], 16.0f);
  EXPECT_EQ(data[16], 0.0f);
  // Half a warp named.
  EXPECT_EQ(TLMC_LAUNCH(swap_halves, dim3(1), dim3(32), 0, nullptr, data.data(), 0xffffu),
            cudaErrorLaunchFailure);
  EXPECT_NE(std::string(tlmc_emulation_message()).find("shuffles with mask 65535"),
            std::string::npos)
      << tlmc_emulation_message();
  tlmc_emulation_reset();
  // A second warp of 16 lanes: the full mask names lanes that do not exist.
  EXPECT_EQ(TLMC_LAUNCH(swap_halves, dim3(1), dim3(48), 0, nullptr, data.data(), 0xffffffffu),
            cudaErrorLaunchFailure);
  EXPECT_NE(std::string(tlmc_emulation_message()).find("where the lanes of its warp are 65535"),
            std::string::npos)
      << tlmc_emulation_message();
  tlmc_emulation_reset();
  // Each warp names its own lanes, but lane k of the second takes lane k + 16's value,
  // which does not exist.
  EXPECT_EQ(TLMC_LAUNCH(swap_halves, dim3(1), dim3(48), 0, nullptr, data.data(), 0u),
            cudaErrorLaunchFailure);
  EXPECT_NE(std::string(tlmc_emulation_message()).find("past the 16 lanes of its warp"),
            std::string::npos)
      << tlmc_emulation_message();
  tlmc_emulation_reset();
}

TEST_P(Emulator, MoreThan48KiBOfDynamicSharedMemoryNeedsTheOptIn) {
  std::vector<float> data(32, 1.0f);
  const size_t bytes = 64 * 1024;
  EXPECT_EQ(TLMC_LAUNCH(stage_dynamic, dim3(1), dim3(32), bytes, nullptr, data.data()),
            cudaErrorInvalidValue);
  EXPECT_NE(std::string(tlmc_emulation_message())
                .find("65536 bytes of dynamic shared memory, over 48 KiB, and its "
                      "cudaFuncAttributeMaxDynamicSharedMemorySize is 0"),
            std::string::npos)
      << tlmc_emulation_message();
  EXPECT_EQ(data[0], 1.0f) << "it did not run";
  ASSERT_EQ(cudaFuncSetAttribute(stage_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 static_cast<int>(bytes)),
            cudaSuccess);
  EXPECT_EQ(TLMC_LAUNCH(stage_dynamic, dim3(1), dim3(32), bytes, nullptr, data.data()), cudaSuccess)
      << tlmc_emulation_message();
  EXPECT_EQ(data[0], 2.0f);
  EXPECT_EQ(TLMC_LAUNCH(stage_dynamic, dim3(1), dim3(32), bytes + 4, nullptr, data.data()),
            cudaErrorInvalidValue);
  tlmc_emulation_reset();
  // The opt-in lasts the process, as on a GPU: withdrawn for the test's other order.
  EXPECT_EQ(cudaFuncSetAttribute(stage_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, 0),
            cudaSuccess);
}

TEST_P(Emulator, AGridPastItsLimitsDoesNotLaunch) {
  std::vector<float> data(64, 0.0f);
  EXPECT_EQ(TLMC_LAUNCH(early_return, dim3(2147483648u), dim3(64), 0, nullptr, data.data(), 64),
            cudaErrorInvalidConfiguration);
  EXPECT_NE(std::string(tlmc_emulation_message()).find("a grid of 2147483648x1x1 blocks"),
            std::string::npos)
      << tlmc_emulation_message();
  EXPECT_EQ(TLMC_LAUNCH(early_return, dim3(1, 65536), dim3(64), 0, nullptr, data.data(), 64),
            cudaErrorInvalidConfiguration);
  tlmc_emulation_reset();
}

// An allocation ends at an inaccessible page: a kernel reading one element past it faults,
// as on a GPU, where it read whatever lay beyond before.
TEST_P(Emulator, ReadingPastAnAllocationFaults) {
  float* in = nullptr;
  float* out = nullptr;
  ASSERT_EQ(cudaMalloc(&in, 16 * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&out, sizeof(float)), cudaSuccess);
  for (int i = 0; i < 16; ++i) in[i] = static_cast<float>(i);
  ASSERT_EQ(TLMC_LAUNCH(read_at, dim3(1), dim3(1), 0, nullptr, in, out, 15), cudaSuccess);
  EXPECT_EQ(*out, 15.0f);
  EXPECT_DEATH(TLMC_LAUNCH(read_at, dim3(1), dim3(1), 0, nullptr, in, out, 16), "");
  EXPECT_EQ(cudaFree(in), cudaSuccess);
  EXPECT_EQ(cudaFree(out), cudaSuccess);
}

// Blocks writing different values to one word: the result follows the order they ran in,
// which `tlmc --check` runs both ways to see.
TEST(EmulatorOrder, RacingBlocksDisagreeBetweenTheTwoOrders) {
  float out[2] = {-1.0f, -1.0f};
  for (int reverse = 0; reverse < 2; ++reverse) {
    tlmc_emulation_set_reverse(reverse == 1);
    ASSERT_EQ(TLMC_LAUNCH(last_block_wins, dim3(4), dim3(32), 0, nullptr, &out[reverse]),
              cudaSuccess)
        << tlmc_emulation_message();
  }
  tlmc_emulation_set_reverse(false);
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[1], 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Orders, Emulator, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return p.param ? std::string("Reverse") : std::string("Forward");
                         });

}  // namespace
