#include "scheduler/schedule_state.h"

#include <algorithm>
#include <map>

#include "ir/diagnostic.h"

namespace tlmc::scheduler {

using ir::BinaryOp;
using ir::Expr;
using ir::ExprKind;

ScheduleState::ScheduleState(ir::TeProgram program) : te(std::move(program)) {
  next_var = te.next_var;
  stages.resize(te.stages.size());
  for (size_t s = 0; s < te.stages.size(); ++s) {
    const ir::Stage& stage = te.stages[s];
    // Loop names carry the stage number, so that printed loop nests read unambiguously.
    const std::string prefix = "s" + std::to_string(s) + "_";
    for (const ir::Axis& a : stage.axes)
      add_iter(static_cast<int>(s), prefix + a.name, a.extent, false);
    for (const ir::Axis& a : stage.reduce_axes)
      add_iter(static_cast<int>(s), prefix + a.name, a.extent, true);
    for (const Iter& it : stages[s].iters)
      stages[s].leaves.push_back(static_cast<int>(&it - stages[s].iters.data()));
  }
}

const Iter& ScheduleState::leaf(int stage, size_t position) const {
  const StageState& s = stages.at(static_cast<size_t>(stage));
  return s.iters.at(static_cast<size_t>(s.leaves.at(position)));
}

std::vector<int> ScheduleState::consumers(int tensor) const {
  std::vector<int> out;
  for (int c : te.consumers(tensor))
    if (stages[static_cast<size_t>(c)].attach != Attach::Inline) out.push_back(c);
  return out;
}

int ScheduleState::add_iter(int stage, const std::string& name, int64_t extent, bool reduce) {
  StageState& s = stages.at(static_cast<size_t>(stage));
  s.iters.push_back(Iter{next_var++, name, extent, reduce});
  return static_cast<int>(s.iters.size()) - 1;
}

Expr iter_value(const StageState& s, int id) {
  const Iter& it = s.iters.at(static_cast<size_t>(id));
  if (it.split_by < 0) return ir::make_var(it.var_id, it.name);
  const IterRelation& rel = s.relations.at(static_cast<size_t>(it.split_by));
  if (rel.is_split) {
    int64_t tile = 1;
    for (size_t i = 1; i < rel.children.size(); ++i)
      tile *= s.iters.at(static_cast<size_t>(rel.children[i])).extent;
    const Iter& outer = s.iters.at(static_cast<size_t>(rel.children[0]));
    if (outer.extent * tile == it.extent) {
      Expr v = ir::make_int(0);
      for (int c : rel.children)
        v = v * s.iters.at(static_cast<size_t>(c)).extent + iter_value(s, c);
      return v;
    }
    // The factors leave a remainder: tiles start at multiples of the tile, the last one
    // shifted back so that it ends at the extent (apply_split says when that is allowed).
    Expr rest = ir::make_int(0);
    for (size_t i = 1; i < rel.children.size(); ++i)
      rest = rest * s.iters.at(static_cast<size_t>(rel.children[i])).extent +
             iter_value(s, rel.children[i]);
    return ir::make_binary(BinaryOp::Min, iter_value(s, rel.children[0]) * tile,
                           ir::make_int(it.extent - tile)) +
           rest;
  }
  // A fused parent: its digit of the fused child, parents outer to inner.
  if (it.extent == 1) return ir::make_int(0);
  Expr fused = iter_value(s, rel.children.at(0));
  int64_t stride = 1;
  for (size_t i = rel.parents.size(); i-- > 0;) {
    if (rel.parents[i] == id) {
      Expr q = ir::make_binary(BinaryOp::FloorDiv, fused, ir::make_int(stride));
      return i == 0 ? q : ir::make_binary(BinaryOp::FloorMod, q, ir::make_int(it.extent));
    }
    stride *= s.iters.at(static_cast<size_t>(rel.parents[i])).extent;
  }
  TLMC_ASSERT(false, "iter " << it.name << " missing from its fuse relation");
}

namespace {

// The values of an integer expression whose inner variables range over [0, extent) and
// whose other variables are fixed: min + the sum of stride * x over the terms, each x in
// [0, count). ok is false when not affine enough.
struct Term {
  int64_t stride;
  int64_t count;
};

struct Interval {
  Expr min;
  std::vector<Term> terms;
  bool ok = true;

  // From the least value to the greatest, both included.
  int64_t span() const {
    int64_t s = 1;
    for (const Term& t : terms) s += (t.count - 1) * t.stride;
    return s;
  }
};

Interval failure() { return Interval{nullptr, {}, false}; }

// `digits`: floor division and modulo of a varying value are bounded too (below); only a
// region relaxed over a fused thread loop needs them.
Interval bound(const Expr& e, const std::map<int, int64_t>& inner, bool digits) {
  bool has_inner = false, has_single = false;
  ir::visit_expr(e, [&](const ir::ExprNode& n) {
    if (n.kind != ExprKind::Var) return;
    const auto it = inner.find(n.var_id);
    if (it != inner.end()) (it->second == 1 ? has_single : has_inner) = true;
  });
  // The variable of a loop of one iteration is 0 (the region then holds no digit of it).
  if (has_single) {
    std::vector<std::pair<int, Expr>> zero;
    for (const auto& [var, extent] : inner)
      if (extent == 1) zero.emplace_back(var, ir::make_int(0));
    return bound(ir::substitute(e, zero), inner, digits);
  }
  if (!has_inner) return Interval{e, {}, true};
  if (e->kind == ExprKind::Var)
    return Interval{ir::make_int(0), {Term{1, inner.at(e->var_id)}}, true};
  if (e->kind != ExprKind::Binary) return failure();
  Interval a = bound(e->args[0], inner, digits), b = bound(e->args[1], inner, digits);
  if (!a.ok || !b.ok) return failure();
  int64_t c;
  switch (e->binary_op) {
    case BinaryOp::Add:
      a.terms.insert(a.terms.end(), b.terms.begin(), b.terms.end());
      return Interval{a.min + b.min, a.terms, true};
    case BinaryOp::Sub:
      if (!b.terms.empty()) return failure();
      return Interval{a.min - b.min, a.terms, true};
    case BinaryOp::Mul:
      if (!ir::is_int_const(e->args[1], &c) || c < 0) return failure();
      for (Term& t : a.terms) t.stride *= c;
      if (c == 0) a.terms.clear();
      return Interval{a.min * c, a.terms, true};
    // A digit of a fused loop: floor division or modulo by a constant of a value that
    // ranges over [0, n) takes every value of [0, ceil(n / c)) or [0, min(n, c)). Of any
    // other varying value it would give a conservative box that may reach past the tensor:
    // such regions are refused, so every region is exact.
    case BinaryOp::FloorDiv:
    case BinaryOp::FloorMod: {
      int64_t low = -1;
      if (!digits || !ir::is_int_const(e->args[1], &c) || c <= 0 || !b.terms.empty() ||
          !ir::is_int_const(a.min, &low) || low != 0)
        return failure();
      const int64_t n = a.span();
      const int64_t count = e->binary_op == BinaryOp::FloorDiv ? (n + c - 1) / c : std::min(n, c);
      // A digit of one value is 0: no term (a divisor or subtrahend may then hold it).
      if (count == 1) return Interval{ir::make_int(0), {}, true};
      return Interval{ir::make_int(0), {Term{1, count}}, true};
    }
    default:
      return failure();
  }
}

// One dimension of a region: `extent` indices from `min`, in runs of `run` whose starts are
// `stride` apart (run == extent where they are consecutive).
struct RegionDim {
  Expr min;
  int64_t extent = 0, run = 0, stride = 0;
};

// The dimension an interval covers: its terms as runs of consecutive indices, `stride`
// apart, when `strided` allows and they form such a lattice exactly; otherwise the box
// from its least value to its greatest.
RegionDim dimension_of(const Interval& i, bool strided) {
  const int64_t span = i.span();
  RegionDim box{i.min, span, span, 0};
  if (!strided) return box;
  std::vector<Term> terms;
  for (const Term& t : i.terms)
    if (t.count > 1) terms.push_back(t);
  std::sort(terms.begin(), terms.end(),
            [](const Term& a, const Term& b) { return a.stride < b.stride; });
  // Terms that continue one another (the next's stride is the elements so far) merge.
  std::vector<Term> merged;
  for (const Term& t : terms) {
    if (!merged.empty() && t.stride == merged.back().stride * merged.back().count)
      merged.back().count *= t.count;
    else
      merged.push_back(t);
  }
  if (merged.empty() || (merged.size() == 1 && merged[0].stride == 1)) return box;
  // One run of consecutive indices (possibly of one) repeated at a larger stride.
  const Term run = merged[0].stride == 1 ? merged[0] : Term{1, 1};
  const size_t outer = merged[0].stride == 1 ? 1 : 0;
  if (merged.size() != outer + 1 || merged[outer].stride < run.count) return box;
  return RegionDim{i.min, run.count * merged[outer].count, run.count, merged[outer].stride};
}

int64_t position_of(const StageState& s, int iter_id) {
  for (size_t i = 0; i < s.leaves.size(); ++i)
    if (s.leaves[i] == iter_id) return static_cast<int64_t>(i);
  return -1;
}

}  // namespace

std::vector<Expr> axis_values(const ScheduleState& st, int stage) {
  const StageState& s = st.stages.at(static_cast<size_t>(stage));
  const ir::Stage& ts = st.te.stages.at(static_cast<size_t>(stage));
  std::vector<Expr> out;
  Region region;
  if (s.attach == Attach::At) region = infer_region(st, stage, s.at_stage, s.at_iter);
  for (size_t j = 0; j < ts.axes.size() + ts.reduce_axes.size(); ++j) {
    Expr v = iter_value(s, static_cast<int>(j));
    if (s.attach == Attach::At && j < ts.axes.size()) {
      TLMC_ASSERT(!region.min.empty(), "attached stage " << ts.name << " has no region");
      // The v-th element of a strided dimension: run v / run, element v % run of it.
      if (region.run[j] < region.extent[j])
        v = ir::make_binary(BinaryOp::FloorDiv, v, ir::make_int(region.run[j])) * region.stride[j] +
            ir::make_binary(BinaryOp::FloorMod, v, ir::make_int(region.run[j]));
      v = region.min[j] + v;
    }
    out.push_back(v);
  }
  return out;
}

Region infer_region(const ScheduleState& st, int producer, int consumer, int at_iter) {
  const ir::Stage& ps = st.te.stages.at(static_cast<size_t>(producer));
  const ir::Shape& shape = st.te.tensor(ps.output).shape;
  std::vector<RegionDim> dims(shape.size());
  bool failed = false;
  const bool relaxed = st.stages.at(static_cast<size_t>(producer)).shared;
  const StageState& cs = st.stages.at(static_cast<size_t>(consumer));
  // Strided only in a CUDA thread's registers: a local stage whose consumer runs in thread
  // loops (lower_schedule.cc maps its indices by the same test).
  bool in_thread = false;
  for (int l : cs.leaves)
    in_thread = in_thread || cs.iters[static_cast<size_t>(l)].kind == ir::LoopKind::GpuThread;
  const bool strided = in_thread && !relaxed;

  auto read_from = [&](int reader, const std::map<int, int64_t>& inner) {
    const ir::Stage& rs = st.te.stages.at(static_cast<size_t>(reader));
    bool reads = false;
    ir::visit_expr(rs.body, [&](const ir::ExprNode& n) {
      reads = reads || (n.kind == ExprKind::Load && n.var_id == ps.output);
    });
    if (!reads) return;  // (and its axis values, which may depend on this region, are not needed)
    std::vector<Expr> av = axis_values(st, reader);
    std::vector<std::pair<int, Expr>> subst;
    for (size_t j = 0; j < rs.axes.size(); ++j) subst.emplace_back(rs.axes[j].var_id, av[j]);
    for (size_t j = 0; j < rs.reduce_axes.size(); ++j)
      subst.emplace_back(rs.reduce_axes[j].var_id, av[rs.axes.size() + j]);
    ir::visit_expr(rs.body, [&](const ir::ExprNode& n) {
      if (n.kind != ExprKind::Load || n.var_id != ps.output) return;
      for (size_t d = 0; d < n.args.size(); ++d) {
        const Interval i = bound(ir::substitute(n.args[d], subst), inner, relaxed);
        if (!i.ok) {
          failed = true;
          return;
        }
        RegionDim r = dimension_of(i, strided);
        // A read covering the whole dimension is the whole dimension, however its first
        // index is written (a digit of a fused loop of one iteration, say).
        if (i.span() >= shape[d]) r = RegionDim{ir::make_int(0), shape[d], shape[d], 0};
        RegionDim& acc = dims[d];
        if (!acc.min) {
          acc = r;
        } else if (!ir::expr_equal(acc.min, r.min)) {
          failed = true;
        } else if (acc.run != r.run || acc.stride != r.stride || acc.extent != r.extent) {
          // Two readers of different shapes: the box covering both.
          const auto last = [](const RegionDim& x) {
            return x.run == x.extent ? x.extent : (x.extent / x.run - 1) * x.stride + x.run;
          };
          const int64_t span = std::max(last(acc), last(r));
          acc = RegionDim{acc.min, span, span, 0};
        }
      }
    });
  };

  const int64_t pos = position_of(cs, at_iter);
  TLMC_ASSERT(pos >= 0, "attach iter is not a loop of the consumer");
  std::map<int, int64_t> inner;
  for (size_t i = static_cast<size_t>(pos) + 1; i < cs.leaves.size(); ++i) {
    const Iter& it = cs.iters[static_cast<size_t>(cs.leaves[i])];
    inner[it.var_id] = it.extent;
  }
  if (relaxed)
    for (const StageState& s : st.stages)
      for (int l : s.leaves) {
        const Iter& it = s.iters[static_cast<size_t>(l)];
        if (it.kind == ir::LoopKind::GpuThread) inner[it.var_id] = it.extent;
      }
  read_from(consumer, inner);
  for (size_t q = 0; q < st.stages.size() && !failed; ++q) {
    const StageState& qs = st.stages[q];
    if (static_cast<int>(q) == producer || qs.attach != Attach::At || qs.at_stage != consumer ||
        qs.at_iter != at_iter)
      continue;
    std::map<int, int64_t> all;
    for (int l : qs.leaves)
      all[qs.iters[static_cast<size_t>(l)].var_id] = qs.iters[static_cast<size_t>(l)].extent;
    read_from(static_cast<int>(q), all);
  }
  Region r;
  if (failed) return r;
  for (size_t d = 0; d < shape.size(); ++d) {
    RegionDim i = dims[d];
    if (!i.min || i.extent >= shape[d]) i = RegionDim{ir::make_int(0), shape[d], shape[d], 0};
    r.min.push_back(i.min);
    r.extent.push_back(i.extent);
    r.run.push_back(i.run);
    r.stride.push_back(i.stride);
  }
  return r;
}

}  // namespace tlmc::scheduler
