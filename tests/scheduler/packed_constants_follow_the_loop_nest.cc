// A constant operand a schedule packs is laid out in the order its loops read it: one
// dimension per loop digit, outer loops first, the vector loop's elements consecutive; the
// copy's bytes follow the Packing; Pack refuses what is not a constant read by one stage.
#include <gtest/gtest.h>

#include <cstring>

#include "scheduler/decision.h"
#include "scheduler/lower_schedule.h"
#include "scheduler/schedule_support.h"
#include "scheduler/sketch.h"

namespace tlmc::scheduler {
namespace {

using test::error_of;
using test::program_of;

// C[4, 16] = A[4, 8] x W[8, 16], W a weight.
const char* const kMatmul = R"(
tlmc: 1
name: mm
inputs:
  a: {shape: [4, 8]}
weights:
  w: {shape: [8, 16], init: {uniform: [-1, 1]}, seed: 1}
nodes:
  - {op: MatMul, inputs: [a, w], outputs: [c]}
outputs: [c]
)";

const ir::Buffer& param(const ir::LoopProgram& p, size_t i) {
  return p.buffers.at(static_cast<size_t>(p.params.at(i)));
}

TEST(PackedConstants, FollowTheTiledLoops) {
  // Loops (i, j, k) -> (j.0, i, k, j.1) with j.1 of 4: W is read as panels of 4 columns.
  ScheduleState st(program_of(kMatmul));
  ASSERT_EQ(error_of(st, {DecisionKind::Split, 0, -1, {1, 4}}), "");
  ASSERT_EQ(error_of(st, {DecisionKind::Reorder, 0, -1, {1, 0, 3, 2}}), "");
  ASSERT_EQ(error_of(st, {DecisionKind::Vectorize, 0, -1, {3}}), "");
  ASSERT_EQ(error_of(st, {DecisionKind::Pack, 0, -1, {1}}), "");
  const ir::LoopProgram p = lower_schedule(st, "k");
  EXPECT_FALSE(param(p, 0).packing) << "A is no constant";
  const ir::Buffer& w = param(p, 1);
  ASSERT_TRUE(w.packing);
  EXPECT_EQ(w.packing->extents, (std::vector<int64_t>{4, 8, 4}));
  EXPECT_EQ(w.packing->source_strides, (std::vector<int64_t>{4, 16, 1}));
  EXPECT_EQ(w.packing->source_offset, 0);
  EXPECT_EQ(w.size, 128);
  // The loads read the copy: panel j.0, row k, column j.1.
  EXPECT_NE(ir::loop_str(p).find("w[(((s0_j.0 * 32) + (s0_k * 4)) + s0_j.1)]"), std::string::npos)
      << ir::loop_str(p);
}

TEST(PackedConstants, FusedLoopsGiveOneDimensionPerDigit) {
  // (i, j.0) fused and parallel: W's panel index is the fused loop's inner digit.
  ScheduleState st(program_of(kMatmul));
  ASSERT_EQ(error_of(st, {DecisionKind::Split, 0, -1, {1, 4}}), "");
  ASSERT_EQ(error_of(st, {DecisionKind::Fuse, 0, -1, {0, 2}}), "");
  ASSERT_EQ(error_of(st, {DecisionKind::Reorder, 0, -1, {0, 2, 1}}), "");
  ASSERT_EQ(error_of(st, {DecisionKind::Pack, 0, -1, {1}}), "");
  const ir::LoopProgram p = lower_schedule(st, "k");
  const ir::Buffer& w = param(p, 1);
  ASSERT_TRUE(w.packing) << ir::loop_str(p);
  EXPECT_EQ(w.packing->extents, (std::vector<int64_t>{4, 8, 4}));
  EXPECT_EQ(w.packing->source_strides, (std::vector<int64_t>{4, 16, 1}));
}

TEST(PackedConstants, ALayoutAlreadyInLoopOrderIsKept) {
  // Loops (i, k, j): W is read row by row, as the model lays it out.
  ScheduleState st(program_of(kMatmul));
  ASSERT_EQ(error_of(st, {DecisionKind::Reorder, 0, -1, {0, 2, 1}}), "");
  ASSERT_EQ(error_of(st, {DecisionKind::Pack, 0, -1, {1}}), "");
  const ir::LoopProgram p = lower_schedule(st, "k");
  EXPECT_FALSE(param(p, 1).packing);
  EXPECT_EQ(param(p, 1).size, 128);
}

TEST(PackedConstants, OnlyAConstantReadByOneStageIsPacked) {
  ScheduleState st(program_of(kMatmul));
  EXPECT_EQ(error_of(st, {DecisionKind::Pack, 0, -1, {0}}),
            "pack 0 [0]: the operand is not a constant input");
  EXPECT_EQ(error_of(st, {DecisionKind::Pack, 0, -1, {2}}),
            "pack 0 [2]: the stage reads no such operand");
  ASSERT_EQ(error_of(st, {DecisionKind::Pack, 0, -1, {1}}), "");
  EXPECT_EQ(error_of(st, {DecisionKind::Pack, 0, -1, {1}}),
            "pack 0 [1]: the operand is packed already");
  // W read by the product and by the sum after it.
  ScheduleState twice(program_of(R"(
tlmc: 1
name: mm
inputs:
  a: {shape: [8, 8]}
weights:
  w: {shape: [8, 8], init: {uniform: [-1, 1]}, seed: 1}
nodes:
  - {op: MatMul, inputs: [a, w], outputs: [c]}
  - {op: Add, inputs: [c, w], outputs: [y]}
outputs: [y]
)"));
  EXPECT_EQ(error_of(twice, {DecisionKind::Pack, 0, -1, {1}}),
            "pack 0 [1]: another stage reads the operand too");
}

TEST(PackedConstants, AShiftedLastTileIsALimitedDigit) {
  // C[4, 197] = A[4, 8] x W[8, 197]: the default tiles of 197 columns leave a remainder, the
  // last tile shifted back to start at column 197 - tile. W's copy follows: its panel digit
  // reads min(panel * tile, 197 - tile).
  const ir::TeProgram program = program_of(R"(
tlmc: 1
name: mm
inputs:
  a: {shape: [4, 8]}
weights:
  w: {shape: [8, 197], init: {uniform: [-1, 1]}, seed: 1}
nodes:
  - {op: MatMul, inputs: [a, w], outputs: [c]}
outputs: [c]
)");
  const ir::Target target = *ir::parse_target("x86-64-avx512");
  const ScheduleState st = apply_schedule(program, default_schedule(program, target));
  const ir::LoopProgram p = lower_schedule(st, "k");
  const std::string loops = ir::loop_str(p);
  const ir::Buffer& w = param(p, 1);
  ASSERT_TRUE(w.packing) << loops;
  ASSERT_EQ(w.packing->source_limits.size(), w.packing->extents.size()) << loops;
  size_t limited = 0;
  for (size_t d = 0; d < w.packing->extents.size(); ++d) {
    if (w.packing->source_limits[d] == ir::Packing::kNoLimit) continue;
    ++limited;
    const int64_t tile = w.packing->source_strides[d];
    EXPECT_EQ(w.packing->source_limits[d], 197 - tile) << loops;
    EXPECT_EQ(w.packing->extents[d], (197 + tile - 1) / tile) << loops;
  }
  EXPECT_EQ(limited, 1u) << loops;
  EXPECT_NE(loops.find("min("), std::string::npos) << loops;
}

TEST(PackedConstants, BytesFollowThePacking) {
  // A 2x3 matrix transposed, and shifted by one with the element past the end zero.
  const std::vector<float> m = {1, 2, 3, 4, 5, 6};
  std::vector<uint8_t> bytes(m.size() * 4);
  std::memcpy(bytes.data(), m.data(), bytes.size());
  auto floats = [](const std::vector<uint8_t>& b) {
    std::vector<float> out(b.size() / 4);
    std::memcpy(out.data(), b.data(), b.size());
    return out;
  };
  EXPECT_EQ(floats(ir::pack_bytes(ir::Packing{{3, 2}, {1, 3}, 0, {}, {}, 0}, bytes, 4)),
            (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(floats(ir::pack_bytes(ir::Packing{{3, 2}, {1, 3}, 1, {}, {}, 0}, bytes, 4)),
            (std::vector<float>{2, 5, 3, 6, 4, 0}));
  // Columns in tiles of 2, the second tile shifted back to start at column 1.
  EXPECT_EQ(
      floats(ir::pack_bytes(
          ir::Packing{
              {2, 2, 2}, {2, 3, 1}, 0, {1, ir::Packing::kNoLimit, ir::Packing::kNoLimit}, {}, 0},
          bytes, 4)),
      (std::vector<float>{1, 2, 4, 5, 2, 3, 5, 6}));
  // The rows (length 3) in pairs of elements, two pairs per row, zero past each row's end:
  // what follows a row in the source is the next row, not padding.
  ir::Packing pairs{{2, 2, 2}, {3, 2, 1}, 0, {}, {}, 0};
  pairs.zero_weights = {0, 2, 1};
  pairs.zero_from = 3;
  EXPECT_EQ(floats(ir::pack_bytes(pairs, bytes, 4)), (std::vector<float>{1, 2, 3, 0, 4, 5, 6, 0}));
  EXPECT_NE(ir::packing_str(pairs).find("zero from 3 by [0, 2, 1]"), std::string::npos)
      << ir::packing_str(pairs);
}

}  // namespace
}  // namespace tlmc::scheduler
