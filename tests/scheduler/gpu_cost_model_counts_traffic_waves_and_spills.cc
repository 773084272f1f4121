// The analytic GPU model on loop nests built by hand, where the right answer is known: a
// warp reading consecutive floats moves 4 sectors, a strided one 32, one reading short rows
// a sector per row; a block too many for the SMs costs another wave; threads of a warp
// reading one shared-memory bank in turn take 32 wavefronts; spilled registers add traffic;
// more resident warps hide more latency; a thread's register tile reads each of its
// operands once; a 16-byte copy moves what its four elements would; a block of fewer threads
// than a warp issues as a whole warp.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "ir/target.h"
#include "scheduler/gpu_cost_model.h"

namespace tlmc::scheduler {
namespace {

using ir::make_int;
using ir::make_var;

const ir::GpuLimits kGpu = ir::parse_target("cuda-sm80")->gpu;

// y[b * T + t] = x[read(b, t)] over `blocks` blocks of `threads` threads, each thread
// `work` dependent FMAs into a register after the read.
// `read`, where given, is the read's index in b and t instead.
ir::LoopProgram copy_kernel(int64_t blocks, int64_t threads, bool strided_read, int64_t work = 0,
                            const std::function<ir::Expr(ir::Expr, ir::Expr)>& read_at = nullptr) {
  ir::LoopProgram p;
  p.name = "copy";
  const int64_t n = blocks * threads;
  p.buffers = {{"x", ir::DType::Float32, n, ir::BufferScope::Param, 0, std::nullopt},
               {"y", ir::DType::Float32, n, ir::BufferScope::Param, 0, std::nullopt},
               {"acc", ir::DType::Float32, 1, ir::BufferScope::Local, 0, std::nullopt}};
  p.params = {0, 1};
  p.num_inputs = 1;
  const ir::Expr b = make_var(0, "b"), t = make_var(1, "t"), w = make_var(2, "w");
  const ir::Expr read = read_at ? read_at(b, t) : strided_read ? t * blocks + b : b * threads + t;
  const ir::Expr acc = ir::make_load(ir::DType::Float32, 2, {make_int(0)});
  std::vector<ir::Stmt> body = {
      ir::make_store(2, make_int(0), ir::make_load(ir::DType::Float32, 0, {read}))};
  if (work > 0)
    body.push_back(ir::make_for(2, "w", work, ir::LoopKind::Serial,
                                ir::make_store(2, make_int(0), acc * acc + acc)));
  body.push_back(ir::make_store(1, b * threads + t, acc));
  p.body = ir::make_for(0, "b", blocks, ir::LoopKind::GpuBlock,
                        ir::make_for(1, "t", threads, ir::LoopKind::GpuThread,
                                     ir::make_allocate(2, ir::make_seq(std::move(body)))));
  p.next_var = 3;
  return p;
}

TEST(GpuCostModel, CoalescedReadsMoveFourSectorsAWarp) {
  const GpuEstimate coalesced = estimate_gpu_time(copy_kernel(4096, 256, false), kGpu, {});
  const GpuEstimate strided = estimate_gpu_time(copy_kernel(4096, 256, true), kGpu, {});
  ASSERT_EQ(coalesced.launches.size(), 1u);
  const double warps = 4096.0 * 256 / 32;
  // A read and a write of 4 sectors each per warp.
  EXPECT_DOUBLE_EQ(coalesced.launches[0].sector_bytes, warps * 2 * 4 * 32);
  // The strided read: 32 sectors, one per lane.
  EXPECT_DOUBLE_EQ(strided.launches[0].sector_bytes, warps * (32 + 4) * 32);
  EXPECT_DOUBLE_EQ(coalesced.launches[0].dram_bytes, 2.0 * 4096 * 256 * 4);
  // The copy is bound by DRAM; the strided read by L2, whose 32-byte sectors it moves 36
  // where the copy moves 8 (its neighbours' blocks read the rest of each sector from L2).
  EXPECT_EQ(coalesced.launches[0].bound, "dram");
  EXPECT_EQ(strided.launches[0].bound, "l2");
  EXPECT_GT(strided.seconds, 1.3 * coalesced.seconds);
}

// Sectors are counted from each lane's address, not extrapolated from the first two: lanes
// reading four elements of each row of 64 (a tile's rows) touch 8 rows' sectors, where a
// stride of one element from lane 0 to lane 1 would suggest 4.
TEST(GpuCostModel, SectorsFollowEveryLanesAddress) {
  const auto rows_of_four = [](const ir::Expr& b, const ir::Expr& t) {
    return b * 64 + ir::make_binary(ir::BinaryOp::FloorDiv, t, make_int(4)) * 64 +
           ir::make_binary(ir::BinaryOp::FloorMod, t, make_int(4));
  };
  const GpuEstimate e = estimate_gpu_time(copy_kernel(64, 256, false, 0, rows_of_four), kGpu, {});
  const double warps = 64.0 * 256 / 32;
  // The read: 8 sectors; the write, consecutive: 4.
  EXPECT_DOUBLE_EQ(e.launches[0].sector_bytes, warps * (8 + 4) * 32);
}

TEST(GpuCostModel, OneBlockMoreThanTheSmsHoldIsAnotherWave) {
  // Compute-bound blocks of 1024 threads, one resident per SM (their registers): 108 blocks
  // take one block's time, 109 two (wave quantisation over the SMs).
  const GpuEstimate full = estimate_gpu_time(copy_kernel(kGpu.sms, 1024, false, 4096), kGpu, {});
  const GpuEstimate over =
      estimate_gpu_time(copy_kernel(kGpu.sms + 1, 1024, false, 4096), kGpu, {});
  ASSERT_EQ(full.launches[0].bound, "compute");
  EXPECT_EQ(full.launches[0].occupancy.blocks_per_sm, 1);
  EXPECT_NEAR((over.seconds - 2e-6) / (full.seconds - 2e-6), 2.0, 1e-9);
  EXPECT_DOUBLE_EQ(full.flops, 108.0 * 1024 * 4096 * 2);  // an FMA a step
}

TEST(GpuCostModel, MoreResidentWarpsHideMoreLatency) {
  // Each thread a chain of dependent FMAs: an SM with one warp waits on each; with eight it
  // does eight times the work in the same time.
  const GpuEstimate thin = estimate_gpu_time(copy_kernel(kGpu.sms, 32, false, 4096), kGpu, {});
  const GpuEstimate wide = estimate_gpu_time(copy_kernel(kGpu.sms, 256, false, 4096), kGpu, {});
  EXPECT_DOUBLE_EQ(wide.flops, 8 * thin.flops);
  EXPECT_NEAR(wide.seconds, thin.seconds, 1e-3 * thin.seconds);
}

// A warp issues for 32 lanes however few of them are threads: the same work in blocks of 1,
// 7, 32 and 48 threads takes 32, 32/7, 1 and 4/3 times the issue slots of the 32-thread
// blocks, and blocks of 1 or 7 threads are estimated that much slower when compute bound.
TEST(GpuCostModel, APartialWarpTakesAWholeWarpsIssueSlots) {
  // 672 a multiple of 1, 7, 32 and 48; enough blocks that each SM holds as many warps as
  // hide the FMAs' latency, whatever the block.
  const int64_t threads_in_all = 672 * 4 * kGpu.sms;
  std::map<int64_t, GpuLaunchEstimate> e;
  for (int64_t threads : {1, 7, 32, 48})
    e[threads] =
        estimate_gpu_time(copy_kernel(threads_in_all / threads, threads, false, 4096), kGpu, {})
            .launches.at(0);
  for (int64_t threads : {1, 7, 48}) EXPECT_DOUBLE_EQ(e[threads].flops, e[32].flops);
  EXPECT_DOUBLE_EQ(e[32].lane_slots, static_cast<double>(threads_in_all) * 4096);
  EXPECT_DOUBLE_EQ(e[1].lane_slots, 32 * e[32].lane_slots);
  EXPECT_DOUBLE_EQ(e[7].lane_slots, 32.0 / 7 * e[32].lane_slots);
  EXPECT_DOUBLE_EQ(e[48].lane_slots, 64.0 / 48 * e[32].lane_slots);
  for (int64_t threads : {1, 7, 32, 48}) EXPECT_EQ(e[threads].bound, "compute") << threads;
  // The latency hidden in every case, the times past the launch's are in the slots' ratios.
  const auto ratio = [&](int64_t threads) {
    return (e[threads].seconds - 2e-6) / (e[32].seconds - 2e-6);
  };
  EXPECT_NEAR(ratio(1), 32.0, 1e-9);
  EXPECT_NEAR(ratio(7), 32.0 / 7, 1e-9);
  EXPECT_NEAR(ratio(48), 64.0 / 48, 1e-9);
}

TEST(GpuCostModel, SpillsAddTraffic) {
  const ir::LoopProgram p = copy_kernel(4096, 256, false, 64);
  ir::KernelResources clean;
  clean.name = "copy_g0";
  clean.threads = 256;
  clean.registers = 32;
  ir::KernelResources spilling = clean;
  spilling.spill_stores = 64;
  spilling.spill_loads = 64;
  const GpuEstimate a = estimate_gpu_time(p, kGpu, {clean});
  const GpuEstimate b = estimate_gpu_time(p, kGpu, {spilling});
  EXPECT_GT(b.launches[0].sector_bytes, a.launches[0].sector_bytes);
  EXPECT_GT(b.seconds, a.seconds);
}

TEST(GpuCostModel, ABankConflictTakesAWavefrontPerLane) {
  // Each thread writes its word of a shared array then reads word t * stride (mod 1024).
  const auto kernel = [](int64_t stride) {
    ir::LoopProgram p;
    p.name = "banks";
    p.buffers = {{"y", ir::DType::Float32, 256, ir::BufferScope::Param, 0, std::nullopt},
                 {"s", ir::DType::Float32, 1024, ir::BufferScope::Shared, 0, std::nullopt}};
    p.params = {0};
    p.num_inputs = 0;
    const ir::Expr t = make_var(1, "t");
    const ir::Expr read = ir::make_binary(ir::BinaryOp::FloorMod, t * stride, make_int(1024));
    p.body = ir::make_for(
        0, "b", 1, ir::LoopKind::GpuBlock,
        ir::make_for(
            1, "t", 256, ir::LoopKind::GpuThread,
            ir::make_allocate(
                1, ir::make_seq(
                       {ir::make_store(1, t, ir::make_float(1)), ir::make_barrier(),
                        ir::make_store(0, t, ir::make_load(ir::DType::Float32, 1, {read}))}))));
    p.next_var = 2;
    return estimate_gpu_time(p, kGpu, {});
  };
  // 8 warps: a conflict-free write and read each, then the read with 32 lanes in one bank.
  EXPECT_DOUBLE_EQ(kernel(1).launches[0].shared_wavefronts, 8 * (1 + 1));
  EXPECT_DOUBLE_EQ(kernel(32).launches[0].shared_wavefronts, 8 * (1 + 32));
  EXPECT_DOUBLE_EQ(kernel(2).launches[0].shared_wavefronts, 8 * (1 + 2));
}

TEST(GpuCostModel, ARegisterTileReadsEachOperandOnce) {
  // 32 threads, each an a x b tile of accumulators: for k < 16, for i < a, for j < b:
  // acc[i * b + j] += A[i * 16 + k] * B[k * 32 * b + j * 32 + t] (A the same word for every
  // lane, B neighbouring words). The i and j loops index the accumulators: unrolled whole,
  // the compiler loads A[.., k] once per i and B[k, ..] once per j, a + b wavefronts a step.
  const auto kernel = [](int64_t a, int64_t b, ir::LoopKind tile_loops) {
    ir::LoopProgram p;
    p.name = "tile";
    p.buffers = {{"y", ir::DType::Float32, 32 * a * b, ir::BufferScope::Param, 0, std::nullopt},
                 {"A", ir::DType::Float32, a * 16, ir::BufferScope::Shared, 0, std::nullopt},
                 {"B", ir::DType::Float32, 16 * 32 * b, ir::BufferScope::Shared, 0, std::nullopt},
                 {"acc", ir::DType::Float32, a * b, ir::BufferScope::Local, 0, std::nullopt}};
    p.params = {0};
    p.num_inputs = 0;
    const ir::Expr t = make_var(1, "t"), k = make_var(2, "k"), i = make_var(3, "i"),
                   j = make_var(4, "j");
    const ir::Expr at = i * b + j;
    const ir::Expr product = ir::make_load(ir::DType::Float32, 1, {i * 16 + k}) *
                             ir::make_load(ir::DType::Float32, 2, {k * (32 * b) + j * 32 + t});
    const ir::Stmt update =
        ir::make_store(3, at, ir::make_load(ir::DType::Float32, 3, {at}) + product);
    const ir::Stmt tile = ir::make_for(
        2, "k", 16, ir::LoopKind::Serial,
        ir::make_for(3, "i", a, tile_loops, ir::make_for(4, "j", b, tile_loops, update)));
    const ir::Stmt out = ir::make_for(
        3, "i", a, ir::LoopKind::Serial,
        ir::make_for(
            4, "j", b, ir::LoopKind::Serial,
            ir::make_store(0, (i * b + j) * 32 + t, ir::make_load(ir::DType::Float32, 3, {at}))));
    p.body = ir::make_for(
        0, "b", 1, ir::LoopKind::GpuBlock,
        ir::make_for(
            1, "t", 32, ir::LoopKind::GpuThread,
            ir::make_allocate(
                1, ir::make_allocate(2, ir::make_allocate(3, ir::make_seq({tile, out}))))));
    p.next_var = 5;
    return estimate_gpu_time(p, kGpu, {});
  };
  EXPECT_DOUBLE_EQ(kernel(4, 4, ir::LoopKind::Serial).launches[0].shared_wavefronts, 16 * (4 + 4));
  EXPECT_DOUBLE_EQ(kernel(8, 2, ir::LoopKind::Serial).launches[0].shared_wavefronts, 16 * (8 + 2));
  EXPECT_DOUBLE_EQ(kernel(8, 2, ir::LoopKind::Unrolled).launches[0].shared_wavefronts,
                   16 * (8 + 2));
  // One accumulator: a step reads both operands.
  EXPECT_DOUBLE_EQ(kernel(1, 1, ir::LoopKind::Serial).launches[0].shared_wavefronts, 16 * 2);
}

TEST(GpuCostModel, ASixteenByteCopyMovesWhatItsFourElementsWould) {
  // A warp copies 128 floats from global into shared memory: four consecutive elements a
  // thread in one vectorised access, or one element a thread in four coalesced rounds.
  const auto kernel = [](bool vectorised) {
    ir::LoopProgram p;
    p.name = "copy";
    p.buffers = {{"g", ir::DType::Float32, 128, ir::BufferScope::Param, 0, std::nullopt},
                 {"s", ir::DType::Float32, 128, ir::BufferScope::Shared, 0, std::nullopt}};
    p.params = {0};
    p.num_inputs = 1;
    const ir::Expr t = make_var(1, "t"), l = make_var(2, "l");
    const ir::Expr at = vectorised ? t * 4 + l : l * 32 + t;
    p.body = ir::make_for(
        0, "b", 1, ir::LoopKind::GpuBlock,
        ir::make_for(
            1, "t", 32, ir::LoopKind::GpuThread,
            ir::make_allocate(
                1, ir::make_for(
                       2, "l", 4, vectorised ? ir::LoopKind::Vectorized : ir::LoopKind::Serial,
                       ir::make_store(1, at, ir::make_load(ir::DType::Float32, 0, {at}))))));
    p.next_var = 3;
    return estimate_gpu_time(p, kGpu, {}).launches.at(0);
  };
  const GpuLaunchEstimate wide = kernel(true), narrow = kernel(false);
  EXPECT_DOUBLE_EQ(wide.sector_bytes, 16 * 32);  // 512 bytes in 16 sectors
  EXPECT_DOUBLE_EQ(wide.sector_bytes, narrow.sector_bytes);
  EXPECT_DOUBLE_EQ(wide.shared_wavefronts, 4);  // 512 bytes through 32 banks of 4
  EXPECT_DOUBLE_EQ(wide.shared_wavefronts, narrow.shared_wavefronts);
}

}  // namespace
}  // namespace tlmc::scheduler
