#include "scheduler/lower_schedule.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "ir/diagnostic.h"
#include "scheduler/pack_constants.h"
#include "scheduler/tile_product.h"

namespace tlmc::scheduler {

using ir::Expr;
using ir::Stmt;

namespace {

// An integer expression as a sum of coefficients times atoms (the parts that are not sums,
// differences or products by a constant: loop variables, digits, minima) plus a constant.
struct Linear {
  std::vector<std::pair<Expr, int64_t>> terms;
  int64_t constant = 0;

  void add(const Expr& e, int64_t scale) {
    int64_t c;
    if (ir::is_int_const(e, &c)) {
      constant += scale * c;
      return;
    }
    if (e->kind == ir::ExprKind::Binary) {
      switch (e->binary_op) {
        case ir::BinaryOp::Add:
          add(e->args[0], scale);
          add(e->args[1], scale);
          return;
        case ir::BinaryOp::Sub:
          add(e->args[0], scale);
          add(e->args[1], -scale);
          return;
        case ir::BinaryOp::Mul:
          if (ir::is_int_const(e->args[1], &c)) return add(e->args[0], scale * c);
          if (ir::is_int_const(e->args[0], &c)) return add(e->args[1], scale * c);
          break;
        default:
          break;
      }
    }
    for (auto& [atom, coefficient] : terms)
      if (ir::expr_equal(atom, e)) {
        coefficient += scale;
        return;
      }
    terms.emplace_back(e, scale);
  }

  Expr expr() const {
    Expr out = ir::make_int(constant);
    for (const auto& [atom, coefficient] : terms) {
      if (coefficient > 0) out = out + atom * coefficient;
      if (coefficient < 0) out = out - atom * -coefficient;
    }
    return out;
  }
};

// The least and greatest value of an atom whose loop variables range over [0, extent).
std::optional<std::pair<int64_t, int64_t>> range_of(const Expr& e,
                                                    const std::map<int, int64_t>& extents) {
  int64_t c;
  if (ir::is_int_const(e, &c)) return std::make_pair(c, c);
  if (e->kind == ir::ExprKind::Var) {
    const auto it = extents.find(e->var_id);
    if (it == extents.end()) return std::nullopt;
    return std::make_pair<int64_t, int64_t>(0, it->second - 1);
  }
  if (e->kind != ir::ExprKind::Binary || !ir::is_int_const(e->args[1], &c) || c <= 0)
    return std::nullopt;
  if (e->binary_op == ir::BinaryOp::FloorMod) return std::make_pair<int64_t, int64_t>(0, c - 1);
  if (e->binary_op != ir::BinaryOp::FloorDiv) return std::nullopt;
  const auto r = range_of(e->args[0], extents);
  if (!r || r->first < 0) return std::nullopt;
  return std::make_pair(r->first / c, r->second / c);
}

// The position of index `q` (relative to its region's first) among a dimension's elements
// in a thread's registers, as a sum in which the thread's and the block's indices cancel:
// q itself where the dimension is consecutive (run 0), run q / stride, element q % stride of
// it where strided. Where the parts of q are seen to be a multiple of the stride plus a
// value in [0, stride), written without the division (the register tile's indices are
// constants once its loops are unrolled).
Expr register_position(const Expr& q, int64_t run, int64_t stride,
                       const std::map<int, int64_t>& extents) {
  Linear whole;
  whole.add(q, 1);
  if (run == 0) return whole.expr();
  Linear high, low;
  high.constant = ir::floor_div(whole.constant, stride);
  low.constant = whole.constant - high.constant * stride;
  int64_t least = low.constant, greatest = low.constant;
  bool known = true;
  for (const auto& [atom, coefficient] : whole.terms) {
    if (coefficient % stride == 0) {
      high.add(atom, coefficient / stride);
      continue;
    }
    low.add(atom, coefficient);
    const auto r = range_of(atom, extents);
    if (!r) {
      known = false;
      break;
    }
    least += std::min(coefficient * r->first, coefficient * r->second);
    greatest += std::max(coefficient * r->first, coefficient * r->second);
  }
  if (!known || least < 0 || greatest >= stride)
    return ir::make_binary(ir::BinaryOp::FloorDiv, q, ir::make_int(stride)) * run +
           ir::make_binary(ir::BinaryOp::FloorMod, q, ir::make_int(stride));
  Linear position = low;
  for (const auto& [atom, coefficient] : high.terms) position.add(atom, coefficient * run);
  position.constant += high.constant * run;
  // (x / r) * r + x % r is x: the producer's own loop over the dimension.
  for (auto& [atom, coefficient] : position.terms) {
    int64_t r;
    if (atom->kind != ir::ExprKind::Binary || atom->binary_op != ir::BinaryOp::FloorDiv ||
        !ir::is_int_const(atom->args[1], &r) || r <= 0 || coefficient % r != 0)
      continue;
    const Expr mod = ir::make_binary(ir::BinaryOp::FloorMod, atom->args[0], atom->args[1]);
    for (auto& [other, c] : position.terms)
      if (c == coefficient / r && ir::expr_equal(other, mod)) {
        c = 0;
        atom = atom->args[0];
        coefficient /= r;
        break;
      }
  }
  return position.expr();
}

class Lowerer {
 public:
  Lowerer(const ScheduleState& st, ir::LoopProgram& out) : st_(st), out_(out) {}

  void run() {
    const ir::TeProgram& te = st_.te;
    out_.next_var = st_.next_var;  // lowering adds loop variables of its own after these
    for (int in : te.inputs) buffer_of_[in] = add_buffer(te.tensor(in), ir::BufferScope::Param);
    for (int o : te.outputs) buffer_of_[o] = add_buffer(te.tensor(o), ir::BufferScope::Param);
    for (int in : te.inputs) out_.params.push_back(buffer_of_[in]);
    for (int o : te.outputs) out_.params.push_back(buffer_of_[o]);
    out_.num_inputs = static_cast<int>(te.inputs.size());
    for (const StageState& ss : st_.stages)
      for (const Iter& it : ss.iters) loop_extents_[it.var_id] = it.extent;
    for (size_t s = 0; s < te.stages.size(); ++s) {
      const int t = te.stages[s].output;
      if (buffer_of_.count(t)) continue;
      const StageState& ss = st_.stages[s];
      if (ss.attach == Attach::Inline) continue;
      const ir::BufferScope scope = ss.attach != Attach::At ? ir::BufferScope::Scratch
                                    : ss.shared             ? ir::BufferScope::Shared
                                                            : ir::BufferScope::Local;
      buffer_of_[t] = add_buffer(te.tensor(t), scope);
      if (scope != ir::BufferScope::Scratch) {
        Region r = infer_region(st_, static_cast<int>(s), ss.at_stage, ss.at_iter);
        TLMC_ASSERT(!r.min.empty(), "no region for attached stage " << te.stages[s].name);
        int64_t size = 1;
        for (int64_t e : r.extent) size *= e;
        out_.buffers[static_cast<size_t>(buffer_of_[t])].size = size;
        regions_[t] = r;
        const StageState& consumer = st_.stages[static_cast<size_t>(ss.at_stage)];
        for (int l : consumer.leaves)
          if (scope == ir::BufferScope::Local &&
              consumer.iters[static_cast<size_t>(l)].kind == ir::LoopKind::GpuThread)
            in_registers_.insert(t);
      } else {
        ir::Buffer& b = out_.buffers[static_cast<size_t>(buffer_of_[t])];
        b.scratch_offset = out_.scratch_bytes;
        out_.scratch_bytes +=
            (b.size * static_cast<int64_t>(ir::dtype_size(b.dtype)) + 63) / 64 * 64;
      }
    }
    std::vector<Stmt> root;
    for (size_t s = 0; s < te.stages.size(); ++s)
      if (st_.stages[s].attach == Attach::Root) root.push_back(stage_nest(static_cast<int>(s)));
    out_.body = ir::make_seq(root);
  }

 private:
  int add_buffer(const ir::TeTensor& t, ir::BufferScope scope) {
    out_.buffers.push_back(ir::Buffer{t.name, t.dtype, ir::shape_numel(t.shape), scope, 0, {}});
    return static_cast<int>(out_.buffers.size()) - 1;
  }

  // Flat index of tensor `t` at multi-dimensional `idx` (relative to its region if local).
  Expr flat_index(int t, const std::vector<Expr>& idx) const {
    auto it = regions_.find(t);
    const ir::Shape& shape = st_.te.tensor(t).shape;
    Expr flat = ir::make_int(0);
    for (size_t d = 0; d < idx.size(); ++d) {
      if (it == regions_.end()) {
        flat = flat * shape[d] + idx[d];
      } else {
        const Region& r = it->second;
        Expr position = idx[d] - r.min[d];
        if (r.run[d] < r.extent[d] || in_registers_.count(t))
          position = register_position(position, r.run[d] < r.extent[d] ? r.run[d] : 0, r.stride[d],
                                       loop_extents_);
        flat = flat * r.extent[d] + position;
      }
    }
    return flat;
  }

  // The stage body with axes replaced by loop expressions and loads made flat.
  Expr body_of(int s, const std::vector<Expr>& axis_vals) const {
    const ir::Stage& ts = st_.te.stages[static_cast<size_t>(s)];
    std::vector<std::pair<int, Expr>> subst;
    for (size_t j = 0; j < ts.axes.size(); ++j) subst.emplace_back(ts.axes[j].var_id, axis_vals[j]);
    for (size_t j = 0; j < ts.reduce_axes.size(); ++j)
      subst.emplace_back(ts.reduce_axes[j].var_id, axis_vals[ts.axes.size() + j]);
    Expr body = ir::substitute(ts.body, subst);
    return ir::rewrite_loads(body, [&](const Expr& load, const std::vector<Expr>& idx) -> Expr {
      auto b = buffer_of_.find(load->var_id);
      TLMC_ASSERT(b != buffer_of_.end(), "stage " << ts.name << " reads "
                                                  << st_.te.tensor(load->var_id).name
                                                  << ", which has no buffer");
      return ir::make_load(load->dtype, b->second, {flat_index(load->var_id, idx)});
    });
  }

  // The statements of stages attached inside loop `iter` of stage `s`, wrapped in their
  // local allocations, around `inner`. Shared copies are filled by the block's threads
  // together: a barrier after them (before they are read) and after `inner` (before the
  // next iteration overwrites them).
  Stmt with_attached(int s, int iter, Stmt inner) {
    std::vector<int> attached;
    for (size_t p = 0; p < st_.stages.size(); ++p) {
      const StageState& ps = st_.stages[p];
      if (ps.attach == Attach::At && ps.at_stage == s && ps.at_iter == iter)
        attached.push_back(static_cast<int>(p));
    }
    if (attached.empty()) return inner;
    std::vector<Stmt> seq;
    bool shared = false;
    std::vector<int> written;  // shared stages computed so far here
    for (int p : attached) {
      // A stage reading a shared stage computed before it here waits for all of it.
      for (int q : written)
        if (reads(p, st_.te.stages[static_cast<size_t>(q)].output)) {
          seq.push_back(ir::make_barrier());
          written.clear();
          break;
        }
      seq.push_back(stage_nest(p));
      const bool is_shared = st_.stages[static_cast<size_t>(p)].shared;
      shared = shared || is_shared;
      if (is_shared) written.push_back(p);
    }
    if (shared) seq.push_back(ir::make_barrier());
    seq.push_back(inner);
    if (shared) seq.push_back(ir::make_barrier());
    Stmt body = ir::make_seq(seq);
    for (size_t i = attached.size(); i-- > 0;)
      body = ir::make_allocate(
          buffer_of_.at(st_.te.stages[static_cast<size_t>(attached[i])].output), body);
    return body;
  }

  bool reads(int stage, int tensor) const {
    const std::vector<int> operands = ir::stage_operands(st_.te.stages[static_cast<size_t>(stage)]);
    return std::find(operands.begin(), operands.end(), tensor) != operands.end();
  }

  Stmt loop(const Iter& it, Stmt body) {
    return ir::make_for(it.var_id, it.name, it.extent, it.kind, std::move(body));
  }

  Stmt stage_nest(int s) {
    const ir::Stage& ts = st_.te.stages[static_cast<size_t>(s)];
    const StageState& ss = st_.stages[static_cast<size_t>(s)];
    const std::vector<Expr> av = axis_values(st_, s);
    const int buf = buffer_of_.at(ts.output);
    // The output's own index: relative to the region when local (the iter values alone).
    std::vector<Expr> own;
    for (size_t j = 0; j < ts.axes.size(); ++j) own.push_back(av[j]);
    const Expr out_index = flat_index(ts.output, own);
    const Expr value = body_of(s, av);
    const size_t n = ss.leaves.size();
    auto iter = [&](size_t i) -> const Iter& {
      return ss.iters[static_cast<size_t>(ss.leaves[i])];
    };

    if (ss.reduce_threads) return thread_reduce_nest(s);
    if (ss.tensorized) return tile_product(s, av);
    if (ir::is_pointwise(ts)) {
      Stmt body = ir::make_store(buf, out_index, value);
      for (size_t i = n; i-- > 0;) body = loop(iter(i), with_attached(s, ss.leaves[i], body));
      return body;
    }
    // A reduction. When the reduction loops are innermost, accumulate in a one-element
    // local (a register) and store once; otherwise initialise the output in a loop nest
    // of its own over the spatial loops, then accumulate in place.
    size_t first_reduce = n;
    for (size_t i = 0; i < n; ++i)
      if (iter(i).reduce && first_reduce == n) first_reduce = i;
    bool reduce_innermost = true;
    for (size_t i = first_reduce; i < n; ++i) reduce_innermost = reduce_innermost && iter(i).reduce;
    const ir::DType t = ts.body->dtype;
    const Expr identity = ir::reduce_identity(ts.reduce, t);
    if (reduce_innermost) {
      const int acc = static_cast<int>(out_.buffers.size());
      out_.buffers.push_back(ir::Buffer{ts.name + ".acc", t, 1, ir::BufferScope::Local, 0, {}});
      const Expr zero = ir::make_int(0);
      const Expr acc_val = ir::make_load(t, acc, {zero});
      Stmt body = ir::make_store(acc, zero, ir::reduce_combine(ts.reduce, acc_val, value));
      for (size_t i = n; i-- > first_reduce;)
        body = loop(iter(i), with_attached(s, ss.leaves[i], body));
      body = ir::make_allocate(acc, ir::make_seq({ir::make_store(acc, zero, identity), body,
                                                  ir::make_store(buf, out_index, acc_val)}));
      for (size_t i = first_reduce; i-- > 0;)
        body = loop(iter(i), with_attached(s, ss.leaves[i], body));
      return body;
    }
    const Expr cur = ir::make_load(t, buf, {out_index});
    Stmt update = ir::make_store(buf, out_index, ir::reduce_combine(ts.reduce, cur, value));
    for (size_t i = n; i-- > 0;) update = loop(iter(i), with_attached(s, ss.leaves[i], update));
    // The init nest reuses the spatial loop variables: it is a sibling of the update nest.
    Stmt init = ir::make_store(buf, out_index, identity);
    for (size_t i = n; i-- > 0;)
      if (!iter(i).reduce) init = loop(iter(i), init);
    return ir::make_seq({init, update});
  }

  // A stage whose reduction loop the threads of a block share (ThreadReduce): thread t
  // accumulates iterations t, t + T, ... of it (the last round tests the bound where T does
  // not divide the extent), the lanes of each warp combine their values by shuffles (a
  // butterfly: every lane ends with the warp's result), the warps through a shared array of
  // one value each, and thread 0 stores the result. The thread loop comes right inside the
  // block loop (at the root) or is the nest (computed inside its consumer's block loop, into
  // shared memory), the stage's other spatial loops inside it: every thread runs them, and
  // the barriers in them, alike.
  Stmt thread_reduce_nest(int s) {
    const ir::Stage& ts = st_.te.stages[static_cast<size_t>(s)];
    const StageState& ss = st_.stages[static_cast<size_t>(s)];
    const Iter& shared = ss.iters[static_cast<size_t>(ss.leaves.back())];
    const int64_t threads = ss.reduce_threads, warps = threads / 32;
    const int64_t rounds = (shared.extent + threads - 1) / threads;
    const Expr thread = ir::make_var(out_.next_var++, ts.name + ".t");
    const Expr round = ir::make_var(out_.next_var++, shared.name + ".o");
    const Expr step = round * threads + thread;
    std::vector<Expr> av = axis_values(st_, s);
    for (Expr& v : av) v = ir::substitute(v, {{shared.var_id, step}});
    const std::vector<Expr> own(av.begin(), av.begin() + static_cast<long>(ts.axes.size()));
    const Expr out_index = flat_index(ts.output, own);
    const ir::DType t = ts.body->dtype;
    const int acc = add_local(ts.name + ".acc", t, 1, ir::BufferScope::Local);
    const Expr zero = ir::make_int(0);
    const Expr acc_val = ir::make_load(t, acc, {zero});
    auto combine = [&](const Expr& v) {
      return ir::make_store(acc, zero, ir::reduce_combine(ts.reduce, acc_val, v));
    };
    Stmt update = combine(body_of(s, av));
    if (rounds * threads != shared.extent)
      update =
          ir::make_if(ir::make_binary(ir::BinaryOp::LT, step, ir::make_int(shared.extent)), update);
    std::vector<Stmt> seq = {
        ir::make_store(acc, zero, ir::reduce_identity(ts.reduce, t)),
        ir::make_for(round->var_id, round->name, rounds, ir::LoopKind::Serial, update)};
    for (int64_t lanes = 16; lanes >= 1; lanes /= 2)
      seq.push_back(
          combine(ir::make_binary(ir::BinaryOp::ShuffleXor, acc_val, ir::make_int(lanes))));
    bool in_loop = false;  // a spatial loop of several iterations inside the thread loop
    for (size_t i = 0; i + 1 < ss.leaves.size(); ++i) {
      const Iter& it = ss.iters[static_cast<size_t>(ss.leaves[i])];
      in_loop = in_loop || (it.kind != ir::LoopKind::GpuBlock && it.extent > 1);
    }
    if (warps > 1) {
      const int partial = add_local(ts.name + ".warps", t, warps, ir::BufferScope::Shared);
      const Expr w = ir::make_var(out_.next_var++, ts.name + ".w");
      std::vector<Stmt> across = {
          ir::make_if(
              ir::make_binary(ir::BinaryOp::EQ,
                              ir::make_binary(ir::BinaryOp::FloorMod, thread, ir::make_int(32)),
                              zero),
              ir::make_store(partial,
                             ir::make_binary(ir::BinaryOp::FloorDiv, thread, ir::make_int(32)),
                             acc_val)),
          ir::make_barrier(), ir::make_store(acc, zero, ir::make_load(t, partial, {zero})),
          ir::make_for(w->var_id, w->name, warps - 1, ir::LoopKind::Unrolled,
                       combine(ir::make_load(t, partial, {w + 1})))};
      // Inside a loop the next round writes the array again: after every thread has read it.
      if (in_loop) across.push_back(ir::make_barrier());
      seq.push_back(ir::make_allocate(partial, ir::make_seq(across)));
    }
    seq.push_back(ir::make_if(ir::make_binary(ir::BinaryOp::EQ, thread, zero),
                              ir::make_store(buffer_of_.at(ts.output), out_index, acc_val)));
    Stmt body = ir::make_allocate(acc, ir::make_seq(seq));
    for (size_t i = ss.leaves.size() - 1; i-- > 0;) {
      const Iter& it = ss.iters[static_cast<size_t>(ss.leaves[i])];
      if (it.kind != ir::LoopKind::GpuBlock) body = loop(it, body);
    }
    body = ir::make_for(thread->var_id, thread->name, threads, ir::LoopKind::GpuThread, body);
    const Iter& outer = ss.iters[static_cast<size_t>(ss.leaves[0])];
    return outer.kind == ir::LoopKind::GpuBlock ? loop(outer, body) : body;
  }

  // A stage the bf16 unit computes whole (Tensorize): one statement at the block's first
  // element, the stage's own loops (each over one iteration outside the block's rows and
  // columns) gone; its constant operand packed as the statement reads it.
  Stmt tile_product(int s, const std::vector<Expr>& av) {
    const ir::Stage& ts = st_.te.stages[static_cast<size_t>(s)];
    const StageState& ss = st_.stages[static_cast<size_t>(s)];
    std::string why;
    const TileOperands o = tile_operands(st_, s, &why);
    TLMC_ASSERT(why.empty(), "tensorized stage " << ts.name << ": " << why);
    std::vector<std::pair<int, Expr>> at_first;
    for (const Iter& it : ss.iters) at_first.emplace_back(it.var_id, ir::make_int(0));
    std::vector<Expr> first;  // the block's first element, by axis
    for (size_t d = 0; d < ts.axes.size(); ++d) first.push_back(ir::substitute(av[d], at_first));
    ir::TileProduct t;
    t.m = o.m;
    t.n = o.n;
    t.k = o.k;
    t.columns = o.columns;
    t.ldc = o.n;
    if (!regions_.count(ts.output)) t.ldc = st_.te.tensor(ts.output).shape.back();
    // A's row at the block's first row, from k = 0.
    std::vector<std::pair<int, Expr>> axes_at_first;
    for (size_t d = 0; d < ts.axes.size(); ++d)
      axes_at_first.emplace_back(ts.axes[d].var_id, first[d]);
    for (const ir::Axis& r : ts.reduce_axes) axes_at_first.emplace_back(r.var_id, ir::make_int(0));
    ir::visit_expr(ts.body, [&](const ir::ExprNode& n) {
      if (n.kind != ir::ExprKind::Load || n.var_id != o.a) return;
      std::vector<Expr> idx;
      for (const Expr& e : n.args) idx.push_back(ir::substitute(e, axes_at_first));
      t.a_index = flat_index(o.a, idx);
    });
    t.a = buffer_of_.at(o.a);
    t.lda = o.lda;
    t.rows = o.rows;
    // Each tap's offset of A, the taps in row-major order of their axes (as B's blocks).
    t.a_taps = {0};
    for (const TapAxis& tap : o.taps) {
      std::vector<int64_t> next;
      for (int64_t base : t.a_taps)
        for (int64_t v = 0; v < tap.extent; ++v) next.push_back(base + v * tap.a_stride);
      t.a_taps = std::move(next);
    }
    // B in ceil(k / 32) * 16 rows of pairs, (B[2r][j], B[2r + 1][j]), zero past k (where
    // B lies along its rows, what follows row k is the next column's, not zero):
    // [N / 16][rows][16][2] where blocked, else [rows][N][2]; one such block per tap.
    const int64_t n_all = o.b_columns, rows = (o.k + 31) / 32 * 16;
    const int64_t sk = o.b_k_stride, sj = o.b_j_stride;
    t.b = buffer_of_.at(o.b);
    ir::Buffer& b = out_.buffers[static_cast<size_t>(t.b)];
    ir::Packing packing;
    const Expr column = first[o.j_axis];
    if (o.blocked) {
      packing.extents = {n_all / 16, rows, 16, 2};
      packing.source_strides = {16 * sj, 2 * sk, sj, sk};
      packing.zero_weights = {0, 2, 0, 1};
      t.b_row = 32;
      t.b_tile = rows * 32;
      t.b_index = ir::make_binary(ir::BinaryOp::FloorDiv, column, ir::make_int(16)) * t.b_tile;
    } else {
      packing.extents = {rows, n_all, 2};
      packing.source_strides = {2 * sk, sj, sk};
      packing.zero_weights = {2, 0, 1};
      t.b_row = 2 * n_all;
      t.b_tile = 2 * o.columns;
      t.b_index = column * 2;
    }
    for (size_t d = o.taps.size(); d-- > 0;) {
      packing.extents.insert(packing.extents.begin(), o.taps[d].extent);
      packing.source_strides.insert(packing.source_strides.begin(), o.taps[d].b_stride);
      packing.zero_weights.insert(packing.zero_weights.begin(), 0);
    }
    packing.zero_from = o.k;
    t.b_tap = rows * n_all * 2;
    b.size = t.b_tap * static_cast<int64_t>(t.a_taps.size());
    b.packing = packing;
    return ir::make_tile_product(buffer_of_.at(ts.output), flat_index(ts.output, first),
                                 std::move(t));
  }

  int add_local(const std::string& name, ir::DType t, int64_t size, ir::BufferScope scope) {
    out_.buffers.push_back(ir::Buffer{name, t, size, scope, 0, {}});
    return static_cast<int>(out_.buffers.size()) - 1;
  }

  const ScheduleState& st_;
  ir::LoopProgram& out_;
  std::map<int, int> buffer_of_;         // TE tensor -> loop buffer
  std::map<int, Region> regions_;        // local TE tensors -> their region
  std::map<int, int64_t> loop_extents_;  // the stages' loop variables -> their extents
  std::set<int> in_registers_;           // local TE tensors of a CUDA thread
};

}  // namespace

ir::LoopProgram lower_schedule(const ScheduleState& st, const std::string& kernel_name) {
  ir::LoopProgram out;
  out.name = kernel_name;
  Lowerer(st, out).run();
  ir::verify_loops(out);
  // After the nest is whole: a packed input is laid out in the order its loops read it.
  std::vector<int> packed;
  for (int t : st.packed) {
    const auto in = std::find(st.te.inputs.begin(), st.te.inputs.end(), t);
    TLMC_ASSERT(in != st.te.inputs.end(), "packed tensor " << t << " is no input");
    packed.push_back(out.params.at(static_cast<size_t>(in - st.te.inputs.begin())));
  }
  pack_constants(out, packed);
  return out;
}

}  // namespace tlmc::scheduler
