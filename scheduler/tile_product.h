// The matrix products a CPU's bf16 unit computes (the Tensorize decision): a stage
//   C[..., i, j] = sum(k: float32(A[..., i, k]) * float32(B[k, j]))
// with A and B bfloat16, A an input of the subgraph, consecutive along k, and B a constant
// [K, N] input only this stage reads (or [N, K, 1...], a 1 x 1 convolution's weight: other
// reduction axes of one iteration), which the decision packs in the rows of pairs that
// AMX's tdpbf16ps and AVX512_BF16's vdpbf16ps read. Computed whole (its region, or the whole
// output at the root): a block of m x n outputs over the whole reduction, m and n each at
// most 16 or a multiple of 16 (AMX's tiles; vdpbf16ps's kernels take the same blocks, so
// that one schedule suits both). A block's rows may span the axis before i too where it
// spans i whole and A's rows along i are as many (a convolution's output rows, each of
// whole positions: C[n, oh, ow, j] from A[n, oh, ow, k]). B is packed in blocks of 16 columns (each
// block's rows of pairs contiguous) where every block of the stage starts at one (N and n multiples
// of 16, n dividing N), else in rows of pairs over all N columns (a block may start anywhere: a
// last block shifted back to end at N).
#pragma once

#include <string>

#include "scheduler/schedule_state.h"

namespace tlmc::scheduler {

struct TileOperands {
  int a = -1, b = -1;             // tensors
  size_t i_axis = 0, j_axis = 0;  // the stage's axes along A's rows and B's columns
  int64_t m = 0, n = 0, k = 0;    // the block a statement computes
  int64_t columns = 0;            // columns of a tile: min(16, n)
  bool blocked = false;           // B packed in blocks of 16 columns, else in rows of pairs
  int64_t b_columns = 0;          // B's columns (N)
  int64_t b_k_stride = 0, b_j_stride = 0;  // elements between B's rows, and its columns
};

// The operands of `stage` as a tile product in `st` as it stands (its loops aside), or why
// it is not one (`why` set, the result's tensors -1).
TileOperands tile_operands(const ScheduleState& st, int stage, std::string* why);

// Whether `stage` is a bfloat16 product whose operands are as the unit reads them
// (tile_operands but for the block), so that some block of it may be computed by the unit:
// not a product of two activations, nor one whose operands' layouts do not suit.
bool tile_product_possible(const ScheduleState& st, int stage);

// Is `s` a sum of products of two bfloat16 tensors widened to float32 (a product that
// --precision bf16 demoted)?
bool is_bf16_product(const ir::Stage& s);

// How a scheduled kernel computes: for --dump precision, "float32", "bf16 by AMX tiles" (or
// "by vdpbf16ps"), or "bf16 widened to float32 (why not by the unit)", per product; and how
// many of its products take each way, for the build's summary.
struct KernelPrecision {
  std::string text;
  int by_unit = 0;  // products the bf16 unit computes
  int widened = 0;  // products computed by loops widening bfloat16
};
KernelPrecision kernel_precision(const ScheduleState& st, const ir::Target& target);

}  // namespace tlmc::scheduler
