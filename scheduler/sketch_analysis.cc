#include "scheduler/sketch_analysis.h"

#include <algorithm>

#include "ir/target.h"

namespace tlmc::scheduler {

bool is_padding(const ir::Stage& s) {
  if (!ir::is_pointwise(s)) return false;
  bool found = false;
  ir::visit_expr(s.body,
                 [&](const ir::ExprNode& n) { found = found || n.kind == ir::ExprKind::Select; });
  return found;
}

bool is_padding_of_reduction(const ScheduleState& st, int stage) {
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(stage)];
  if (!is_padding(ts) || st.te.is_output(ts.output)) return false;
  for (int c : st.consumers(ts.output))
    if (!ir::is_pointwise(st.te.stages[static_cast<size_t>(c)])) return true;
  return false;
}

bool is_kept_for_a_reduction(const ScheduleState& st, int stage) {
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(stage)];
  if (!ir::is_pointwise(ts) || st.te.is_output(ts.output) || is_padding(ts)) return false;
  bool transcendental = false;
  ir::visit_expr(ts.body, [&](const ir::ExprNode& n) {
    transcendental =
        transcendental || (n.kind == ir::ExprKind::Unary &&
                           (n.unary_op == ir::UnaryOp::Exp || n.unary_op == ir::UnaryOp::Log ||
                            n.unary_op == ir::UnaryOp::Tanh || n.unary_op == ir::UnaryOp::Erf ||
                            n.unary_op == ir::UnaryOp::Sigmoid));
  });
  const std::vector<int> readers = st.consumers(ts.output);
  const bool by_reduction = std::any_of(readers.begin(), readers.end(), [&](int r) {
    return !ir::is_pointwise(st.te.stages[static_cast<size_t>(r)]);
  });
  return transcendental && by_reduction && readers.size() >= 2;
}

std::vector<int> attachable_producers(const ScheduleState& st, int root) {
  std::vector<int> out;
  std::set<int> group = {root};
  for (int s = root - 1; s >= 0; --s) {
    const ir::Stage& ts = st.te.stages[static_cast<size_t>(s)];
    if (st.stages[static_cast<size_t>(s)].attach != Attach::Root ||
        (ir::is_pointwise(ts) && !is_kept_for_a_reduction(st, s)) || st.te.is_output(ts.output))
      continue;
    std::vector<int> readers = st.consumers(ts.output);
    bool ok = !readers.empty();
    for (int r : readers) ok = ok && group.count(r);
    if (!ok) continue;
    group.insert(s);
    out.push_back(s);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::set<size_t> axes_indexing(const ir::Stage& stage, int tensor) {
  std::set<size_t> used;
  ir::visit_expr(stage.body, [&](const ir::ExprNode& n) {
    if (n.kind != ir::ExprKind::Load || n.var_id != tensor) return;
    for (const ir::Expr& i : n.args)
      for (size_t a = 0; a < stage.axes.size(); ++a)
        if (ir::uses_var(i, stage.axes[a].var_id)) used.insert(a);
  });
  return used;
}

std::set<size_t> axes_indexing_any(const ScheduleState& st, const ir::Stage& stage,
                                   const std::vector<int>& producers) {
  std::set<size_t> used;
  for (int p : producers) {
    std::set<size_t> u = axes_indexing(stage, st.te.stages[static_cast<size_t>(p)].output);
    used.insert(u.begin(), u.end());
  }
  return used;
}

std::set<size_t> axes_read_across(const ir::Stage& stage) {
  std::set<size_t> across;
  if (stage.axes.size() < 2) return across;
  const int innermost = stage.axes.back().var_id;
  ir::visit_expr(stage.body, [&](const ir::ExprNode& n) {
    if (n.kind != ir::ExprKind::Load || n.args.size() < 2) return;
    const ir::Expr& last = n.args.back();
    if (last->kind != ir::ExprKind::Var || last->var_id == innermost) return;
    if (std::none_of(n.args.begin(), n.args.end() - 1,
                     [&](const ir::Expr& i) { return ir::uses_var(i, innermost); }))
      return;
    for (size_t a = 0; a + 1 < stage.axes.size(); ++a)
      if (last->var_id == stage.axes[a].var_id) across.insert(a);
  });
  return across;
}

int64_t largest_divisor_at_most(int64_t n, int64_t cap) {
  for (int64_t d = std::min(n, cap); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

int64_t tile_at_most(int64_t n, int64_t cap) {
  const int64_t most = std::min(n, cap);
  const int64_t d = largest_divisor_at_most(n, cap);
  return 2 * d >= most ? d : most;
}

int64_t accumulator_registers(const ir::Target& t) {
  switch (t.isa) {
    case ir::Isa::Avx512:
      return 16;
    case ir::Isa::Avx2:
      return 8;
    case ir::Isa::Generic:
      return 4;
  }
  return 4;
}

namespace {

// The axes of a root stage along which a reduction computed per tile is vectorised (the
// anchor's innermost axis) and reuses its vector operands from registers (the innermost
// other anchor axis that no vector operand, a load contiguous along the innermost axis, is
// indexed by: rows of a matrix product, output channels of an NCHW convolution, the row
// position of a channels-last one). Anchor axes map to root axes through the root's load
// of the anchor, so an anchor laid out differently from the output is tiled correctly.
struct TileAxes {
  size_t vector;
  size_t reuse;         // == rank: none
  bool mapped = false;  // found through an anchor whose innermost axis can be vectorised
};

TileAxes register_tile_axes(const ScheduleState& st, const ir::Stage& root,
                            const std::vector<int>& producers) {
  const size_t rank = root.axes.size();
  TileAxes t{rank - 1, rank >= 2 ? rank - 2 : rank};
  for (int p : producers) {
    const ir::Stage& anchor = st.te.stages[static_cast<size_t>(p)];
    if (anchor.axes.size() != rank) continue;
    std::vector<int> to_root(rank, -1);
    bool found = false;
    ir::visit_expr(root.body, [&](const ir::ExprNode& n) {
      if (n.kind != ir::ExprKind::Load || n.var_id != anchor.output || n.args.size() != rank)
        return;
      found = true;
      for (size_t j = 0; j < rank; ++j) {
        // A unit axis is read at index 0 (a broadcast): it keeps its position.
        if (anchor.axes[j].extent == 1 && ir::is_int_const(n.args[j]))
          to_root[j] = static_cast<int>(j);
        for (size_t a = 0; a < rank; ++a)
          if (n.args[j]->kind == ir::ExprKind::Var && n.args[j]->var_id == root.axes[a].var_id)
            to_root[j] = static_cast<int>(a);
      }
    });
    // Every anchor axis maps to its own root axis (a diagonal load a[i, i] does not).
    const std::set<int> distinct(to_root.begin(), to_root.end());
    if (!found || std::count(to_root.begin(), to_root.end(), -1) > 0 ||
        distinct.size() != to_root.size() || anchor.axes.back().extent < 2)
      continue;
    const int inner = anchor.axes.back().var_id;
    std::set<size_t> used;
    ir::visit_expr(anchor.body, [&](const ir::ExprNode& n) {
      if (n.kind != ir::ExprKind::Load || n.args.empty() || !ir::uses_var(n.args.back(), inner))
        return;
      for (const ir::Expr& i : n.args)
        for (size_t a = 0; a < rank; ++a)
          if (ir::uses_var(i, anchor.axes[a].var_id)) used.insert(a);
    });
    t.mapped = true;
    t.vector = static_cast<size_t>(to_root[rank - 1]);
    t.reuse = rank >= 2 ? static_cast<size_t>(to_root[rank - 2]) : rank;
    for (size_t a = rank - 1; a-- > 0;)
      if (!used.count(a) && anchor.axes[a].extent > 1) {
        t.reuse = static_cast<size_t>(to_root[a]);
        break;
      }
    return t;
  }
  return t;
}

}  // namespace

std::vector<int64_t> register_tile(const ScheduleState& st, int root_stage,
                                   const std::vector<int>& producers, const ir::Target& target) {
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(root_stage)];
  const size_t rank = ts.axes.size();
  std::vector<int64_t> tile(rank, 1);
  if (rank == 0) return tile;
  // Axes no producer reads along stay whole inside the tile, else the producer would be
  // recomputed for every tile along them (a softmax row, say).
  const std::set<size_t> indexed = axes_indexing_any(st, ts, producers);
  // Up to kTileVectors vectors along the vector axis times the reuse axis's tile, choosing
  // the split that fills the most registers (then the one needing the fewest loads per tap).
  const int64_t lanes = target.vector_lanes(ir::compute_size(st.te.tensor(ts.output).dtype));
  const TileAxes axes = register_tile_axes(st, ts, producers);
  int64_t best_score = -1, best_loads = 0;
  // Without an anchor to map (row reductions), the vector tile is kTileVectors wide.
  for (int64_t v = axes.mapped ? 1 : kTileVectors; v <= kTileVectors; v *= 2) {
    const int64_t tv = tile_at_most(ts.axes[axes.vector].extent, v * lanes);
    const int64_t vectors = (tv + lanes - 1) / lanes;
    const int64_t tr =
        axes.reuse < rank
            ? tile_at_most(ts.axes[axes.reuse].extent,
                           std::max<int64_t>(1, accumulator_registers(target) / vectors))
            : 1;
    const int64_t score = vectors * tr, loads = vectors + tr;
    if (score > best_score || (score == best_score && loads < best_loads)) {
      best_score = score;
      best_loads = loads;
      tile[axes.vector] = tv;
      if (axes.reuse < rank) tile[axes.reuse] = tr;
    }
  }
  for (size_t a = 0; a < rank; ++a)
    if (!indexed.count(a)) tile[a] = ts.axes[a].extent;
  return tile;
}

namespace {

// Sums of constants and of variables times constants: indices whose regions are exact.
bool affine(const ir::Expr& e) {
  int64_t c;
  switch (e->kind) {
    case ir::ExprKind::IntImm:
    case ir::ExprKind::Var:
      return true;
    case ir::ExprKind::Binary:
      if (e->binary_op == ir::BinaryOp::Add) return affine(e->args[0]) && affine(e->args[1]);
      if (e->binary_op == ir::BinaryOp::Sub)
        return affine(e->args[0]) && ir::is_int_const(e->args[1], &c);
      if (e->binary_op == ir::BinaryOp::Mul)
        return affine(e->args[0]) && ir::is_int_const(e->args[1], &c) && c >= 0;
      return false;
    default:
      return false;
  }
}

// Every load of `tensor` in the body is indexed affinely.
bool read_affinely(const ir::Expr& body, int tensor) {
  bool ok = true;
  ir::visit_expr(body, [&](const ir::ExprNode& n) {
    if (n.kind != ir::ExprKind::Load || n.var_id != tensor) return;
    for (const ir::Expr& i : n.args) ok = ok && affine(i);
  });
  return ok;
}

}  // namespace

std::vector<size_t> shared_operands(const ir::Stage& stage) {
  std::vector<size_t> out;
  if (ir::is_pointwise(stage)) return out;
  const std::vector<int> operands = ir::stage_operands(stage);
  for (size_t k = 0; k < operands.size(); ++k) {
    if (!read_affinely(stage.body, operands[k])) continue;
    const std::set<size_t> used = axes_indexing(stage, operands[k]);
    for (size_t a = 0; a < stage.axes.size(); ++a)
      if (stage.axes[a].extent > 1 && !used.count(a)) {
        out.push_back(k);
        break;
      }
  }
  return out;
}

bool is_gpu_tiled_reduction(const ScheduleState& st, int stage) {
  const ir::Stage& ts = st.te.stages.at(static_cast<size_t>(stage));
  const StageState& ss = st.stages.at(static_cast<size_t>(stage));
  if (ir::is_pointwise(ts) || ss.attach != Attach::Root || ss.shared ||
      st.te.is_output(ts.output) || shared_operands(ts).empty())
    return false;
  const std::vector<int> readers = st.consumers(ts.output);
  if (readers.size() != 1) return false;
  const size_t r = static_cast<size_t>(readers[0]);
  return ir::is_pointwise(st.te.stages[r]) && st.stages[r].attach == Attach::Root &&
         read_affinely(st.te.stages[r].body, ts.output);
}

}  // namespace tlmc::scheduler
