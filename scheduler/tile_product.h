// The matrix products a CPU's bf16 unit computes (the Tensorize decision): a stage
//   C[..., i, j] = sum(k, taps: float32(A[...]) * float32(B[...]))
// with A and B bfloat16, where
// - B is a constant only this stage reads, indexed by j, k and each tap alone (B[k, j] of a
//   product, W[j, k, kh, kw] of a convolution), which the decision packs in the rows of
//   pairs that AMX's tdpbf16ps and AVX512_BF16's vdpbf16ps read, a block of them per tap;
// - A is an input of the subgraph or a stage computed whole at the root (a convolution's
//   padded input), read affinely: consecutive along k, rows lda apart along i, each tap a
//   constant offset (a convolution's window: (oh + kh, ow * s + kw, c) of a channels-last
//   input is k = c, lda = s * C, taps kh * W * C + kw * C), never along j;
// - the taps are the other axes summed over (a 1 x 1 convolution's, of one iteration, read
//   at 0, are none), over at least 16 values of k each, since a step of the unit spans 32.
// Computed whole (its region, or the whole output at the root): a block of m x n outputs
// over the whole reduction, m at most 16 or whole tiles of 4 to 16 rows (the largest
// divisor of m at most 16: 56 rows are 4 tiles of 14), n at most 16 or whole tiles of 16
// (AMX's tiles; vdpbf16ps's kernels take the same blocks, so that one schedule suits
// both). A block's rows may span the axis before i too where it spans i whole and A's rows
// run on across it (rows of a 1 x 1 convolution's positions, one after another in A and in
// the output alike: C[n, oh, ow, j] from A[n, oh, ow, k]). B is packed in blocks of 16
// columns (each block's rows of pairs contiguous) where every block of the stage starts at
// one (N and n multiples of 16, n dividing N), else in rows of pairs over all N columns (a
// block may start anywhere: a last block shifted back to end at N).
#pragma once

#include <string>

#include "scheduler/schedule_state.h"

namespace tlmc::scheduler {

// An axis summed over besides k (a convolution's window): an offset of A and a block of B.
struct TapAxis {
  int var = -1;
  int64_t extent = 0;
  int64_t a_stride = 0, b_stride = 0;  // elements of A and of B between its values
};

struct TileOperands {
  int a = -1, b = -1;             // tensors
  size_t i_axis = 0, j_axis = 0;  // the stage's axes along A's rows and B's columns
  int k_var = -1;                 // the axis summed over along A's rows
  int64_t m = 0, n = 0, k = 0;    // the block a statement computes
  int64_t rows = 0;               // rows of a tile: the largest divisor of m at most 16
  int64_t columns = 0;            // columns of a tile: min(16, n)
  int64_t lda = 0;                // elements between A's rows
  std::vector<TapAxis> taps;      // the other axes summed over, of more than one iteration
  bool rows_run_on = false;       // A's rows run on across the axis before i (may fold)
  bool blocked = false;           // B packed in blocks of 16 columns, else in rows of pairs
  int64_t b_columns = 0;          // B's columns (N)
  int64_t b_k_stride = 0, b_j_stride = 0;  // elements between B's rows, and its columns
};

// The rows of the unit's tiles for a block of m rows: the largest divisor of m at most 16.
// A block of more than 16 rows takes tiles of 4 rows or more (tile_rows_fit).
int64_t tile_rows(int64_t m);
bool tile_rows_fit(int64_t m);

// The operands of `stage` as a tile product in `st` as it stands (its loops aside), or why
// it is not one (`why` set, the result's tensors -1).
TileOperands tile_operands(const ScheduleState& st, int stage, std::string* why);

// Whether `stage` is a bfloat16 product whose operands are as the unit reads them
// (tile_operands but for the block), so that some block of it may be computed by the unit:
// not a product of two activations, nor one whose operands' layouts do not suit.
bool tile_product_possible(const ScheduleState& st, int stage);

// Whether a block of such a product may span several rows along the axis before i (each
// whole): A's rows run on across them (a 1 x 1 convolution of stride 1, not a window over
// a padded input nor a strided one).
bool tile_product_folds(const ScheduleState& st, int stage);

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
