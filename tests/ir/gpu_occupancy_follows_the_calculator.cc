// Occupancy as the CUDA occupancy calculator computes it for an A100 (compute capability
// 8.0) and an H100 (9.0), worked by hand from the data sheets' limits, and the limits a
// kernel can exceed.
#include <gtest/gtest.h>

#include "ir/gpu_occupancy.h"

namespace tlmc::ir {
namespace {

GpuLimits a100() { return parse_target("cuda-sm80")->gpu; }
GpuLimits h100() { return parse_target("cuda-sm90")->gpu; }

KernelResources kernel(int threads, int registers, int shared_bytes) {
  KernelResources k;
  k.name = "k";
  k.threads = threads;
  k.registers = registers;
  k.shared_bytes = shared_bytes;
  return k;
}

TEST(GpuOccupancy, ThreadsLimitSmallKernels) {
  // 256 threads of 32 registers: 2048 / 256 = 8 blocks, every warp slot filled.
  const Occupancy o = occupancy(a100(), kernel(256, 32, 0));
  EXPECT_EQ(o.blocks_per_sm, 8);
  EXPECT_DOUBLE_EQ(o.warps_fraction, 1.0);
  EXPECT_EQ(o.limited_by, "threads");
}

TEST(GpuOccupancy, RegistersAreAllocatedPerWarpIn256s) {
  // 128 registers x 256 threads = 32768 per block: two blocks of 65536, a quarter of the warps.
  Occupancy o = occupancy(a100(), kernel(256, 128, 0));
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_DOUBLE_EQ(o.warps_fraction, 0.25);
  EXPECT_EQ(o.limited_by, "registers");
  // 33 registers a thread take 33 * 32 = 1056, rounded to 1280 per warp: 8 warps per block
  // take 10240, six blocks fit in 65536 (not the 7 that 33 * 256 = 8448 would suggest).
  o = occupancy(a100(), kernel(256, 33, 0));
  EXPECT_EQ(o.blocks_per_sm, 6);
  EXPECT_EQ(o.limited_by, "registers");
}

TEST(GpuOccupancy, SharedMemoryReservesOneKibPerBlock) {
  // 48 KiB + 1 KiB reserved: 164 KiB hold 3 on an A100, 228 KiB hold 4 on an H100.
  EXPECT_EQ(occupancy(a100(), kernel(128, 32, 48 * 1024)).blocks_per_sm, 3);
  EXPECT_EQ(occupancy(h100(), kernel(128, 32, 48 * 1024)).blocks_per_sm, 4);
  EXPECT_EQ(occupancy(h100(), kernel(128, 32, 48 * 1024)).limited_by, "shared memory");
  // 100 bytes take 128 of the SM's shared memory beside the reserve: 164 K / 1152 = 145, so
  // the 32 blocks an SM holds at most limit first.
  const Occupancy o = occupancy(a100(), kernel(32, 16, 100));
  EXPECT_EQ(o.blocks_per_sm, 32);
  EXPECT_EQ(o.limited_by, "blocks");
  EXPECT_DOUBLE_EQ(o.warps_fraction, 0.5);
}

TEST(GpuOccupancy, AKernelOverALimitCannotLaunch) {
  const GpuLimits gpu = a100();
  EXPECT_TRUE(limit_violations(gpu, kernel(1024, 64, 48 * 1024)).empty());
  std::vector<std::string> over = limit_violations(gpu, kernel(1024, 128, 0));
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over[0], "registers per block 131072 > 65536");
  over = limit_violations(gpu, kernel(2048, 16, 48 * 1024 + 4));
  ASSERT_EQ(over.size(), 2u);
  EXPECT_EQ(over[0], "threads per block 2048 > 1024");
  EXPECT_EQ(over[1], "static shared memory per block 49156 > 49152");
  EXPECT_EQ(occupancy(gpu, kernel(2048, 16, 0)).blocks_per_sm, 0);
  // The descriptor decides: a GPU of 64 registers per thread refuses 65.
  GpuLimits small = gpu;
  small.regs_per_thread = 64;
  over = limit_violations(small, kernel(32, 65, 0));
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over[0], "registers per thread 65 > 64");
}

TEST(GpuOccupancy, DynamicSharedMemoryCountsUpToTheOptInLimit) {
  // 100 KiB asked for at launch, none static: one block (plus its reserve) of an A100's
  // 164 KiB, two of an H100's 228 KiB.
  KernelResources k = kernel(256, 32, 0);
  k.dynamic_shared_bytes = 100 * 1024;
  EXPECT_TRUE(limit_violations(a100(), k).empty());
  EXPECT_EQ(occupancy(a100(), k).blocks_per_sm, 1);
  EXPECT_EQ(occupancy(a100(), k).limited_by, "shared memory");
  EXPECT_EQ(occupancy(h100(), k).blocks_per_sm, 2);
  // Past the A100's opt-in 163 KiB (static and dynamic together), within the H100's 227.
  k.shared_bytes = 64;
  k.dynamic_shared_bytes = 163 * 1024;
  const std::vector<std::string> over = limit_violations(a100(), k);
  ASSERT_EQ(over.size(), 2u);
  EXPECT_EQ(over[0], "shared memory per block (dynamic, opted in) 166976 > 166912");
  EXPECT_EQ(over[1], "shared memory per SM (one block, reserve included) 168064 > 167936");
  EXPECT_EQ(occupancy(a100(), k).blocks_per_sm, 0);
  EXPECT_TRUE(limit_violations(h100(), k).empty());
}

}  // namespace
}  // namespace tlmc::ir
