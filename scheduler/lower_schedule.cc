#include "scheduler/lower_schedule.h"

#include <algorithm>
#include <map>
#include <utility>

#include "ir/diagnostic.h"
#include "scheduler/pack_constants.h"

namespace tlmc::scheduler {

using ir::Expr;
using ir::Stmt;

namespace {

class Lowerer {
 public:
  Lowerer(const ScheduleState& st, ir::LoopProgram& out) : st_(st), out_(out) {}

  void run() {
    const ir::TeProgram& te = st_.te;
    for (int in : te.inputs) buffer_of_[in] = add_buffer(te.tensor(in), ir::BufferScope::Param);
    for (int o : te.outputs) buffer_of_[o] = add_buffer(te.tensor(o), ir::BufferScope::Param);
    for (int in : te.inputs) out_.params.push_back(buffer_of_[in]);
    for (int o : te.outputs) out_.params.push_back(buffer_of_[o]);
    out_.num_inputs = static_cast<int>(te.inputs.size());
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
    out_.next_var = st_.next_var;
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
        flat = flat * it->second.extent[d] + (idx[d] - it->second.min[d]);
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
    for (int p : attached) {
      seq.push_back(stage_nest(p));
      shared = shared || st_.stages[static_cast<size_t>(p)].shared;
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

  const ScheduleState& st_;
  ir::LoopProgram& out_;
  std::map<int, int> buffer_of_;   // TE tensor -> loop buffer
  std::map<int, Region> regions_;  // local TE tensors -> their region
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
