// Questions the sketch rules (and the -O0 schedule) ask of a schedule state: which stages
// are padding, which reductions a root stage may compute per tile, which axes they index.
#pragma once

#include <set>
#include <vector>

#include "scheduler/schedule_state.h"

namespace tlmc::scheduler {

// A pointwise stage that selects (a padding stage: bounds test, else a constant).
bool is_padding(const ir::Stage& s);
// A padding stage read by a reduction: kept out of the reduction's inner loop.
bool is_padding_of_reduction(const ScheduleState& st, int stage);
// Reductions that root stage `root` can compute inside its tiles: not outputs, at the root,
// read only by `root` or by each other; in stage order.
std::vector<int> attachable_producers(const ScheduleState& st, int root);
// Axes of `stage` that index some load of `tensor` in its body.
std::set<size_t> axes_indexing(const ir::Stage& stage, int tensor);

}  // namespace tlmc::scheduler
