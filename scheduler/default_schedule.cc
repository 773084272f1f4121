#include "scheduler/default_schedule.h"

#include <algorithm>
#include <set>

#include "scheduler/sketch_analysis.h"

namespace tlmc::scheduler {
namespace {

using ir::Expr;

// Builds a schedule decision by decision on a live state, keeping only decisions that fit.
class Builder {
 public:
  explicit Builder(const ir::TeProgram& p) : st(p) {}
  bool emit(Decision d) {
    try {
      apply_decision(st, d);
    } catch (const InvalidDecision&) {
      return false;
    }
    out.push_back(std::move(d));
    return true;
  }
  ScheduleState st;
  std::vector<Decision> out;
};

bool has_select(const Expr& e) {
  bool found = false;
  ir::visit_expr(e,
                 [&](const ir::ExprNode& n) { found = found || n.kind == ir::ExprKind::Select; });
  return found;
}

// Pointwise stages are substituted into their readers, except a padding stage (a select)
// read by a reduction: inlined, its bounds test would run for every tap of the window.
void inline_pointwise(Builder& b) {
  for (size_t s = 0; s < b.st.te.stages.size(); ++s) {
    const ir::Stage& ts = b.st.te.stages[s];
    if (!ir::is_pointwise(ts) || b.st.te.is_output(ts.output)) continue;
    bool read_by_reduction = false;
    for (int c : b.st.consumers(ts.output))
      read_by_reduction =
          read_by_reduction || !ir::is_pointwise(b.st.te.stages[static_cast<size_t>(c)]);
    if (read_by_reduction && has_select(ts.body)) continue;
    b.emit(Decision{DecisionKind::Inline, static_cast<int>(s), -1, {}});
  }
}

// Loops of an attached reduction: the reduction outside the spatial tile when the tile is
// wide enough to vectorise, so each tap updates a vector of outputs; innermost otherwise.
void schedule_attached(Builder& b, int s, const ir::Target& target) {
  const StageState& ss = b.st.stages[static_cast<size_t>(s)];
  const ir::Stage& ts = b.st.te.stages[static_cast<size_t>(s)];
  const size_t n_spatial = ts.axes.size(), n = ss.leaves.size();
  const int64_t inner_extent = n_spatial ? ss.iters[n_spatial - 1].extent : 1;
  const int lanes = target.vector_lanes(ir::dtype_size(b.st.te.tensor(ts.output).dtype));
  if (n_spatial == 0 || inner_extent < std::max(2, lanes / 2)) return;
  // spatial loops of extent 1 first, then the reduction, then the spatial tile
  std::vector<int64_t> order;
  for (size_t i = 0; i < n_spatial; ++i)
    if (ss.iters[i].extent == 1) order.push_back(static_cast<int64_t>(i));
  for (size_t i = n_spatial; i < n; ++i) order.push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i < n_spatial; ++i)
    if (ss.iters[i].extent != 1) order.push_back(static_cast<int64_t>(i));
  b.emit(Decision{DecisionKind::Reorder, s, -1, order});
  b.emit(Decision{DecisionKind::Vectorize, s, -1, {static_cast<int64_t>(n - 1)}});
  // The tile's other loops are unrolled when the whole tile fits in the accumulator
  // registers: written out, its elements become registers instead of memory.
  const int64_t vectors = (inner_extent + lanes - 1) / lanes;
  int64_t tile_vectors = vectors;
  for (size_t i = n - 1; i-- > 0;) {
    const Iter it = b.st.leaf(s, i);  // a copy: emit() replaces the state
    if (it.reduce || it.extent == 1) break;
    tile_vectors *= it.extent;
    if (tile_vectors > accumulator_registers(target)) break;
    b.emit(Decision{DecisionKind::Unroll, s, -1, {static_cast<int64_t>(i)}});
  }
}

// Tiles a root stage: split each axis into outer and tile loops, outer loops fused and
// parallel, reductions listed in `producers` computed per tile, innermost loop vectorised.
void schedule_root(Builder& b, int s, const ir::Target& target) {
  const ir::Stage ts = b.st.te.stages[static_cast<size_t>(s)];
  const std::vector<int> producers =
      ir::is_pointwise(ts) ? attachable_producers(b.st, s) : std::vector<int>{};
  const size_t rank = ts.axes.size();
  if (rank == 0) return;
  std::vector<int64_t> tile(rank, 1);
  if (producers.empty())
    tile[rank - 1] = largest_divisor_at_most(ts.axes[rank - 1].extent, 256);
  else
    tile = register_tile(b.st, s, producers, target);
  if (!ir::is_pointwise(ts)) std::fill(tile.begin(), tile.end() - 1, 1);  // a root reduction
  // split: each axis becomes (outer, tile) where both exceed 1
  std::vector<int> role;  // per loop: 0 outer, 1 tile
  size_t pos = 0;
  bool any_outer = false;
  for (size_t a = 0; a < rank; ++a) {
    const int64_t e = ts.axes[a].extent;
    if (tile[a] > 1 && tile[a] < e) {
      b.emit(Decision{DecisionKind::Split, s, -1, {static_cast<int64_t>(pos), tile[a]}});
      role.push_back(0);
      role.push_back(1);
      pos += 2;
      any_outer = true;
    } else {
      role.push_back(tile[a] == e && e > 1 ? 1 : 0);
      any_outer = any_outer || role.back() == 0;
      pos += 1;
    }
  }
  const size_t spatial_loops = pos;
  std::vector<int64_t> order;
  for (size_t i = 0; i < spatial_loops; ++i)
    if (role[i] == 0) order.push_back(static_cast<int64_t>(i));
  const size_t outer = order.size();
  for (size_t i = 0; i < spatial_loops; ++i)
    if (role[i] == 1) order.push_back(static_cast<int64_t>(i));
  for (size_t i = spatial_loops; i < b.st.stages[static_cast<size_t>(s)].leaves.size(); ++i)
    order.push_back(static_cast<int64_t>(i));
  b.emit(Decision{DecisionKind::Reorder, s, -1, order});
  if (outer >= 2) b.emit(Decision{DecisionKind::Fuse, s, -1, {0, static_cast<int64_t>(outer)}});
  if (any_outer && b.st.leaf(s, 0).extent > 1) b.emit(Decision{DecisionKind::Parallel, s, -1, {0}});
  // Each producer is computed per tile: inside the (fused) outer loop. Readers first: a
  // producer attaches only once every stage reading it is in place.
  for (auto p = producers.rbegin(); p != producers.rend(); ++p)
    b.emit(Decision{DecisionKind::ComputeAt, *p, s, {0}});
  const StageState& ss = b.st.stages[static_cast<size_t>(s)];
  const Iter& last = b.st.leaf(s, ss.leaves.size() - 1);
  if (!last.reduce && last.extent > 1)
    b.emit(Decision{DecisionKind::Vectorize, s, -1, {static_cast<int64_t>(ss.leaves.size() - 1)}});
  for (int p : producers)
    if (b.st.stages[static_cast<size_t>(p)].attach == Attach::At) schedule_attached(b, p, target);
}

}  // namespace

std::vector<Decision> default_schedule(const ir::TeProgram& program, const ir::Target& target) {
  Builder b(program);
  inline_pointwise(b);
  // A reduction writing an output is computed into a local per tile, then copied out with
  // the tile's loops (Ansor's cache-write), so that the tiles run in parallel.
  for (size_t s = 0; s < b.st.te.stages.size(); ++s) {
    const ir::Stage& ts = b.st.te.stages[s];
    if (b.st.te.is_output(ts.output) && !ir::is_pointwise(ts) &&
        b.st.stages[s].attach == Attach::Root) {
      if (b.emit(Decision{DecisionKind::CacheWrite, static_cast<int>(s), -1, {}})) ++s;
    }
  }
  // Root stages from the last: each attaches the reductions that only it reads.
  for (int s = static_cast<int>(b.st.te.stages.size()) - 1; s >= 0; --s) {
    const StageState& ss = b.st.stages[static_cast<size_t>(s)];
    if (ss.attach != Attach::Root || ss.transformed) continue;
    schedule_root(b, s, target);
  }
  return b.out;
}

}  // namespace tlmc::scheduler
