// Questions the sketch rules (and the -O0 schedule) ask of a schedule state: which stages
// are padding, which reductions a root stage may compute per tile, which axes they index,
// and the register tile the -O0 policy gives such a stage.
#pragma once

#include <set>
#include <vector>

#include "ir/target.h"
#include "scheduler/schedule_state.h"

namespace tlmc::scheduler {

// A pointwise stage that selects (a padding stage: bounds test, else a constant).
bool is_padding(const ir::Stage& s);
// A padding stage read by a reduction: kept out of the reduction's inner loop.
bool is_padding_of_reduction(const ScheduleState& st, int stage);
// A pointwise stage computed once per tile rather than inlined into its readers: it
// computes a transcendental function and is read by a reduction and by another stage
// (Softmax's exp(x - max), read by the row's sum and by the output, computed once instead
// of twice).
bool is_kept_for_a_reduction(const ScheduleState& st, int stage);
// Stages that root stage `root` can compute inside its tiles (reductions, and stages kept
// for them): not outputs, at the root, read only by `root` or by each other; in stage order.
std::vector<int> attachable_producers(const ScheduleState& st, int root);
// Axes of `stage` that index some load of `tensor` in its body.
std::set<size_t> axes_indexing(const ir::Stage& stage, int tensor);
// Axes of `stage` that index some load of the output of one of `producers` (stages of st).
std::set<size_t> axes_indexing_any(const ScheduleState& st, const ir::Stage& stage,
                                   const std::vector<int>& producers);
// A transpose's axes: those of `stage`, other than its innermost, along which some load in
// its body reads consecutive elements (the axis is the load's last index) while its
// innermost axis strides through that load (indexes another of its dimensions).
std::set<size_t> axes_read_across(const ir::Stage& stage);

// Operands of a reduction stage (their numbers, as stage_operands gives them) that its
// output elements share: read the same way along one of its spatial axes of extent > 1 (a
// product's rows along the columns, a convolution's weights along the image).
std::vector<size_t> shared_operands(const ir::Stage& stage);
// CUDA: a reduction at the root, not a shared copy, read by one stage only, at the root and
// pointwise, with operands to share: the GPU's multi-level tiling computes it per thread
// inside that stage's tiles, its shared operands staged through shared memory.
bool is_gpu_tiled_reduction(const ScheduleState& st, int stage);

// The -O0 policy, which the spaces' default values follow too.
// The largest divisor of n that is at most cap (1 when none is above 1).
int64_t largest_divisor_at_most(int64_t n, int64_t cap);
// The -O0 policy's tile of a loop that may leave a remainder, at most cap: the largest
// divisor of n when it is at least half of min(n, cap), else min(n, cap), the last tile
// shifted back (50257 in tiles of 64 rather than 29; 300 in tiles of 150, not 256).
int64_t tile_at_most(int64_t n, int64_t cap);
// Vector registers a reduction's accumulator tile may take: half of the register file, the
// rest holding operands.
int64_t accumulator_registers(const ir::Target& t);
// Vectors along the innermost axis of a reduction's tile, at most.
constexpr int64_t kTileVectors = 4;
// The tile of root stage `root` computing `producers` per tile, per root axis: the vector
// axis up to kTileVectors vectors, the reuse axis filling the accumulator registers, axes
// no producer indexes whole, the others 1.
std::vector<int64_t> register_tile(const ScheduleState& st, int root,
                                   const std::vector<int>& producers, const ir::Target& target);

}  // namespace tlmc::scheduler
