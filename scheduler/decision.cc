#include "scheduler/decision.h"

#include <algorithm>
#include <array>
#include <set>
#include <sstream>

#include "ir/diagnostic.h"
#include "scheduler/tile_product.h"

namespace tlmc::scheduler {
namespace {

[[noreturn]] void invalid(const Decision& d, const std::string& why) {
  throw InvalidDecision(decision_str(d) + ": " + why);
}

StageState& stage_of(ScheduleState& st, const Decision& d) {
  if (d.stage < 0 || d.stage >= static_cast<int>(st.stages.size())) invalid(d, "no such stage");
  StageState& s = st.stages[static_cast<size_t>(d.stage)];
  if (s.attach == Attach::Inline) invalid(d, "the stage is inlined");
  return s;
}

// The loop position args[i], checked against the stage's loops.
size_t position(const StageState& s, const Decision& d, size_t i) {
  if (d.args.size() <= i) invalid(d, "missing loop position");
  const int64_t p = d.args[i];
  if (p < 0 || p >= static_cast<int64_t>(s.leaves.size())) invalid(d, "loop position out of range");
  return static_cast<size_t>(p);
}

void require_changeable(const StageState& s, const Decision& d) {
  if (s.frozen) invalid(d, "another stage is computed inside this stage's loops");
  if (s.reduce_threads)
    invalid(d, "the stage's reduction is shared by threads: its loops are final");
  if (s.tensorized) invalid(d, "the stage is computed by the bf16 unit: its loops are final");
}

// A stage the bf16 unit reads (a padded input) stays whole at the root, where it was when
// the unit's decision took it.
void require_not_read_by_unit(const ScheduleState& st, const Decision& d) {
  for (int reader : st.consumers(st.te.stages[static_cast<size_t>(d.stage)].output))
    if (st.stages[static_cast<size_t>(reader)].tensorized)
      invalid(d, "the bf16 unit reads the stage whole at the root");
}

bool has_attached_at(const ScheduleState& st, int stage, int iter) {
  for (const StageState& s : st.stages)
    if (s.attach == Attach::At && s.at_stage == stage && (iter < 0 || s.at_iter == iter))
      return true;
  return false;
}

void apply_inline(ScheduleState& st, const Decision& d) {
  StageState& s = stage_of(st, d);
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(d.stage)];
  if (!ir::is_pointwise(ts)) invalid(d, "only a stage without reduction can be inlined");
  if (st.te.is_output(ts.output)) invalid(d, "an output of the subgraph cannot be inlined");
  if (s.attach != Attach::Root || s.transformed || s.frozen)
    invalid(d, "the stage is already scheduled");
  require_not_read_by_unit(st, d);
  const int tensor = ts.output;
  const ir::Stage producer = ts;
  for (ir::Stage& c : st.te.stages) {
    c.body =
        ir::rewrite_loads(c.body, [&](const ir::Expr& load, std::vector<ir::Expr> idx) -> ir::Expr {
          if (load->var_id != tensor)
            return ir::make_load(load->dtype, load->var_id, std::move(idx));
          std::vector<std::pair<int, ir::Expr>> subst;
          for (size_t j = 0; j < producer.axes.size(); ++j)
            subst.emplace_back(producer.axes[j].var_id, idx[j]);
          return ir::substitute(producer.body, subst);
        });
  }
  s.attach = Attach::Inline;
}

void apply_cache_write(ScheduleState& st, const Decision& d) {
  StageState& s = stage_of(st, d);
  const size_t at = static_cast<size_t>(d.stage);
  ir::Stage orig = st.te.stages[at];
  if (ir::is_pointwise(orig)) invalid(d, "only a reduction can be cached");
  if (s.attach != Attach::Root || s.transformed || s.frozen)
    invalid(d, "the stage is already scheduled");
  // New tensor and stage "<name>.local" computing the reduction, placed before the stage.
  ir::TeTensor local = st.te.tensor(orig.output);
  local.name += ".local";
  local.stage = static_cast<int>(at);
  const int local_id = static_cast<int>(st.te.tensors.size());
  st.te.tensors.push_back(local);
  for (ir::TeTensor& t : st.te.tensors)
    if (t.stage >= static_cast<int>(at) && &t != &st.te.tensors.back()) ++t.stage;
  ir::Stage reduce_stage = orig;
  reduce_stage.name += ".local";
  reduce_stage.output = local_id;
  ir::Stage copy = orig;
  copy.reduce = ir::ReduceKind::None;
  copy.reduce_axes.clear();
  std::vector<ir::Expr> idx;
  for (const ir::Axis& a : orig.axes) idx.push_back(ir::make_var(a.var_id, a.name));
  copy.body = ir::make_load(local.dtype, local_id, idx);
  st.te.stages[at] = copy;
  st.te.stages.insert(st.te.stages.begin() + static_cast<long>(at), reduce_stage);
  for (StageState& o : st.stages)
    if (o.attach == Attach::At && o.at_stage >= static_cast<int>(at)) ++o.at_stage;
  StageState copy_state;
  st.stages.insert(st.stages.begin() + static_cast<long>(at) + 1, copy_state);
  for (const ir::Axis& a : orig.axes)
    st.add_iter(static_cast<int>(at) + 1, "s" + std::to_string(at + 1) + "_" + a.name, a.extent,
                false);
  StageState& cs = st.stages[at + 1];
  for (size_t i = 0; i < cs.iters.size(); ++i) cs.leaves.push_back(static_cast<int>(i));
}

// Loops of a stage built afresh from its axes (a stage that a decision has just redefined).
void reset_loops(ScheduleState& st, int stage) {
  StageState& s = st.stages[static_cast<size_t>(stage)];
  s.iters.clear();
  s.leaves.clear();
  s.relations.clear();
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(stage)];
  const std::string prefix = "s" + std::to_string(stage) + "_";
  for (const ir::Axis& a : ts.axes) st.add_iter(stage, prefix + a.name, a.extent, false);
  for (const ir::Axis& a : ts.reduce_axes) st.add_iter(stage, prefix + a.name, a.extent, true);
  for (size_t i = 0; i < s.iters.size(); ++i) s.leaves.push_back(static_cast<int>(i));
}

// out[s] = R_k body(s, k), with k = ko * f + ki, becomes
//   out.rf[s, ki] = R_(ko, other reduction axes) body(s, ko * f + ki)   (a new stage before)
//   out[s]        = R_ki out.rf[s, ki]
// so that the f partial reductions run in parallel or over vector lanes.
void apply_rfactor(ScheduleState& st, const Decision& d) {
  StageState& s = stage_of(st, d);
  const size_t at = static_cast<size_t>(d.stage);
  const ir::Stage orig = st.te.stages[at];
  if (ir::is_pointwise(orig)) invalid(d, "only a reduction can be factored");
  if (s.attach != Attach::Root || s.transformed || s.frozen)
    invalid(d, "the stage is already scheduled");
  if (d.args.size() != 2) invalid(d, "expects a reduction axis and a factor");
  const int64_t r = d.args[0], f = d.args[1];
  if (r < 0 || r >= static_cast<int64_t>(orig.reduce_axes.size()))
    invalid(d, "no such reduction axis");
  const ir::Axis k = orig.reduce_axes[static_cast<size_t>(r)];
  if (f < 2 || f >= k.extent || k.extent % f != 0)
    invalid(d, "the factor must divide the axis's extent " + std::to_string(k.extent) +
                   " and lie strictly between 1 and it");
  const ir::Axis ki{st.next_var++, k.name + ".i", f};
  const ir::Axis ko{st.next_var++, k.name, k.extent / f};
  const ir::Axis kr{st.next_var++, k.name + ".i", f};
  // The partial results: a new tensor and stage "<name>.rf".
  ir::TeTensor partial = st.te.tensor(orig.output);
  partial.name += ".rf";
  partial.shape.push_back(f);
  partial.stage = static_cast<int>(at);
  const int partial_id = static_cast<int>(st.te.tensors.size());
  for (ir::TeTensor& t : st.te.tensors)
    if (t.stage >= static_cast<int>(at)) ++t.stage;
  st.te.tensors.push_back(partial);
  ir::Stage rf = orig;
  rf.name += ".rf";
  rf.output = partial_id;
  rf.axes.push_back(ki);
  rf.reduce_axes[static_cast<size_t>(r)] = ko;
  rf.body = ir::substitute(orig.body, {{k.var_id, ir::make_var(ko.var_id, ko.name) * f +
                                                      ir::make_var(ki.var_id, ki.name)}});
  // The stage itself reduces the partial results.
  ir::Stage total = orig;
  total.reduce_axes = {kr};
  std::vector<ir::Expr> idx;
  for (const ir::Axis& a : orig.axes) idx.push_back(ir::make_var(a.var_id, a.name));
  idx.push_back(ir::make_var(kr.var_id, kr.name));
  total.body = ir::make_load(partial.dtype, partial_id, idx);
  st.te.stages[at] = total;
  st.te.stages.insert(st.te.stages.begin() + static_cast<long>(at), rf);
  for (StageState& o : st.stages)
    if (o.attach == Attach::At && o.at_stage >= static_cast<int>(at)) ++o.at_stage;
  st.stages.insert(st.stages.begin() + static_cast<long>(at), StageState{});
  reset_loops(st, static_cast<int>(at));
  reset_loops(st, static_cast<int>(at) + 1);
}

void apply_compute_at(ScheduleState& st, const Decision& d) {
  StageState& s = stage_of(st, d);
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(d.stage)];
  if (st.te.is_output(ts.output))
    invalid(d, "an output of the subgraph must be computed at the root");
  if (s.attach != Attach::Root || s.transformed || s.frozen)
    invalid(d, "the stage is already scheduled");
  require_not_read_by_unit(st, d);
  if (d.target <= d.stage || d.target >= static_cast<int>(st.stages.size()))
    invalid(d, "the target must be a later stage");
  StageState& c = st.stages[static_cast<size_t>(d.target)];
  if (c.attach == Attach::Inline) invalid(d, "the target is inlined");
  if (c.reduce_threads) invalid(d, "the target's reduction is shared by threads");
  if (c.tensorized) invalid(d, "the target is computed by the bf16 unit");
  const size_t pos = position(c, d, 0);
  const int at_iter = c.leaves[pos];
  if (c.iters[static_cast<size_t>(at_iter)].kind == ir::LoopKind::Vectorized)
    invalid(d, "cannot compute inside a vectorized loop");
  for (int consumer : st.consumers(ts.output)) {
    const StageState& cs = st.stages[static_cast<size_t>(consumer)];
    const bool ok = consumer == d.target ||
                    (cs.attach == Attach::At && cs.at_stage == d.target && cs.at_iter == at_iter);
    if (!ok) invalid(d, "stage " + std::to_string(consumer) + " also reads this stage");
  }
  Region r = infer_region(st, d.stage, d.target, at_iter);
  if (r.min.empty()) invalid(d, "the region the consumer reads is not affine in its loops");
  int64_t elems = 1;
  for (int64_t e : r.extent) elems *= e;
  if (elems * static_cast<int64_t>(ir::dtype_size(st.te.tensor(ts.output).dtype)) > kMaxLocalBytes)
    invalid(d, "the local buffer would take " + std::to_string(elems) + " elements");
  for (size_t j = 0; j < r.extent.size(); ++j) s.iters[j].extent = r.extent[j];
  s.region_run = r.run;
  s.attach = Attach::At;
  s.at_stage = d.target;
  s.at_iter = at_iter;
  c.frozen = true;
}

void apply_split(ScheduleState& st, const Decision& d) {
  StageState& s = stage_of(st, d);
  require_changeable(s, d);
  const size_t pos = position(s, d, 0);
  if (d.args.size() < 2 || d.args.size() > 5) invalid(d, "a split takes one to four factors");
  const int parent = s.leaves[pos];
  const Iter p = s.iters[static_cast<size_t>(parent)];
  if (p.kind != ir::LoopKind::Serial) invalid(d, "cannot split an annotated loop");
  int64_t prod = 1;
  for (size_t i = 1; i < d.args.size(); ++i) {
    if (d.args[i] < 1) invalid(d, "factors must be positive");
    prod *= d.args[i];
  }
  // A split that leaves a remainder shifts its last tile inwards (iter_value): the tile
  // overlaps the one before it, and the elements they share are computed twice. That is
  // harmless only where computing an element again stores the same value: a stage with no
  // reduction, whose tiles are never smaller than the product of the factors.
  if (p.extent % prod != 0) {
    if (!st.te.stages[static_cast<size_t>(d.stage)].reduce_axes.empty())
      invalid(d, "factors do not divide the extent " + std::to_string(p.extent) +
                     " of a loop of a reduction");
    if (p.extent < prod) invalid(d, "factors exceed the extent " + std::to_string(p.extent));
  }
  IterRelation rel{true, {parent}, {}};
  std::vector<int64_t> extents = {(p.extent + prod - 1) / prod};
  extents.insert(extents.end(), d.args.begin() + 1, d.args.end());
  for (size_t i = 0; i < extents.size(); ++i)
    rel.children.push_back(
        st.add_iter(d.stage, p.name + "." + std::to_string(i), extents[i], p.reduce));
  StageState& s2 = st.stages[static_cast<size_t>(d.stage)];  // add_iter may reallocate
  s2.iters[static_cast<size_t>(parent)].split_by = static_cast<int>(s2.relations.size());
  s2.relations.push_back(rel);
  s2.leaves.erase(s2.leaves.begin() + static_cast<long>(pos));
  s2.leaves.insert(s2.leaves.begin() + static_cast<long>(pos), rel.children.begin(),
                   rel.children.end());
  s2.transformed = true;
}

void apply_reorder(ScheduleState& st, const Decision& d) {
  StageState& s = stage_of(st, d);
  require_changeable(s, d);
  if (d.args.size() != s.leaves.size()) invalid(d, "the order must list every loop once");
  std::set<int64_t> seen(d.args.begin(), d.args.end());
  if (seen.size() != d.args.size() || (!seen.empty() && *seen.begin() != 0) ||
      (!seen.empty() && *seen.rbegin() != static_cast<int64_t>(d.args.size()) - 1))
    invalid(d, "the order must list every loop once");
  std::vector<int> leaves;
  for (int64_t p : d.args) leaves.push_back(s.leaves[static_cast<size_t>(p)]);
  for (size_t i = 0; i + 1 < leaves.size(); ++i)
    if (s.iters[static_cast<size_t>(leaves[i])].kind == ir::LoopKind::Vectorized)
      invalid(d, "a vectorized loop must stay innermost");
  for (size_t i = 0; i < leaves.size(); ++i) {
    const ir::LoopKind k = s.iters[static_cast<size_t>(s.leaves[i])].kind;
    if ((k == ir::LoopKind::GpuBlock || k == ir::LoopKind::GpuThread) && leaves[i] != s.leaves[i])
      invalid(d, "a loop bound to blocks or threads keeps its place");
  }
  s.leaves = leaves;
  s.transformed = true;
}

void apply_fuse(ScheduleState& st, const Decision& d) {
  StageState& s = stage_of(st, d);
  require_changeable(s, d);
  const size_t first = position(s, d, 0);
  if (d.args.size() != 2 || d.args[1] < 2 ||
      first + static_cast<size_t>(d.args[1]) > s.leaves.size())
    invalid(d, "fuse takes a first loop and a count of at least 2 loops");
  const size_t count = static_cast<size_t>(d.args[1]);
  IterRelation rel{false, {}, {}};
  int64_t extent = 1;
  std::string name;
  const bool reduce = s.iters[static_cast<size_t>(s.leaves[first])].reduce;
  for (size_t i = first; i < first + count; ++i) {
    const Iter& it = s.iters[static_cast<size_t>(s.leaves[i])];
    if (it.reduce != reduce) invalid(d, "cannot fuse a spatial loop with a reduction loop");
    if (it.kind != ir::LoopKind::Serial) invalid(d, "cannot fuse an annotated loop");
    rel.parents.push_back(s.leaves[i]);
    extent *= it.extent;
    name += (name.empty() ? "" : "_") + it.name;
  }
  const int child = st.add_iter(d.stage, name, extent, reduce);
  StageState& s2 = st.stages[static_cast<size_t>(d.stage)];
  rel.children = {child};
  for (int p : rel.parents)
    s2.iters[static_cast<size_t>(p)].split_by = static_cast<int>(s2.relations.size());
  s2.relations.push_back(rel);
  s2.leaves.erase(s2.leaves.begin() + static_cast<long>(first),
                  s2.leaves.begin() + static_cast<long>(first + count));
  s2.leaves.insert(s2.leaves.begin() + static_cast<long>(first), child);
  s2.transformed = true;
}

void annotate(ScheduleState& st, const Decision& d, ir::LoopKind kind) {
  StageState& s = stage_of(st, d);
  const size_t pos = position(s, d, 0);
  Iter& it = s.iters[static_cast<size_t>(s.leaves[pos])];
  if (it.kind != ir::LoopKind::Serial) invalid(d, "the loop is already annotated");
  if (s.tensorized) invalid(d, "the stage is computed by the bf16 unit: its loops are final");
  if (kind == ir::LoopKind::Parallel) {
    if (it.reduce) invalid(d, "a reduction loop cannot run in parallel");
    if (s.attach != Attach::Root)
      invalid(d, "only a stage computed at the root has parallel loops");
    for (int l : s.leaves)
      if (s.iters[static_cast<size_t>(l)].kind == ir::LoopKind::Parallel)
        invalid(d, "the stage already has a parallel loop");
  }
  if (kind == ir::LoopKind::Vectorized) {
    if (pos + 1 != s.leaves.size()) invalid(d, "only the innermost loop can be vectorized");
    if (it.reduce) invalid(d, "a reduction loop cannot be vectorized");
    if (it.extent < 2) invalid(d, "a loop of one iteration cannot be vectorized");
    if (has_attached_at(st, d.stage, s.leaves[pos]))
      invalid(d, "a stage is computed inside this loop");
  }
  if (kind == ir::LoopKind::Unrolled && it.extent > 256)
    invalid(d, "unrolling is limited to 256 iterations");
  it.kind = kind;
  s.transformed = true;
}

void apply_pack(ScheduleState& st, const Decision& d) {
  if (stage_of(st, d).tensorized) invalid(d, "the stage's operands are laid out for the bf16 unit");
  if (d.args.size() != 1) invalid(d, "expected one operand");
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(d.stage)];
  const std::vector<int> operands = ir::stage_operands(ts);
  if (d.args[0] < 0 || d.args[0] >= static_cast<int64_t>(operands.size()))
    invalid(d, "the stage reads no such operand");
  const int tensor = operands[static_cast<size_t>(d.args[0])];
  const ir::TeTensor& t = st.te.tensor(tensor);
  if (t.stage >= 0 || !t.constant) invalid(d, "the operand is not a constant input");
  if (st.consumers(tensor) != std::vector<int>{d.stage})
    invalid(d, "another stage reads the operand too");
  if (std::find(st.packed.begin(), st.packed.end(), tensor) != st.packed.end())
    invalid(d, "the operand is packed already");
  st.packed.push_back(tensor);
}

void apply_cache_read(ScheduleState& st, const Decision& d) {
  StageState& s = stage_of(st, d);
  if (s.attach != Attach::Root || s.transformed || s.frozen)
    invalid(d, "the stage is already scheduled");
  if (d.args.size() != 1) invalid(d, "expected one operand");
  const size_t at = static_cast<size_t>(d.stage);
  const std::vector<int> operands = ir::stage_operands(st.te.stages[at]);
  if (d.args[0] < 0 || d.args[0] >= static_cast<int64_t>(operands.size()))
    invalid(d, "the stage reads no such operand");
  const int tensor = operands[static_cast<size_t>(d.args[0])];
  const ir::TeTensor source = st.te.tensor(tensor);
  if (st.stages[at].shared) invalid(d, "the stage is a shared copy itself");
  // The copy: a new tensor and stage "<tensor>.shared" before the reader.
  ir::TeTensor copy_tensor = source;
  copy_tensor.name += ".shared";
  copy_tensor.stage = static_cast<int>(at);
  copy_tensor.constant = false;
  for (ir::TeTensor& t : st.te.tensors)
    if (t.stage >= static_cast<int>(at)) ++t.stage;
  const int copy_id = static_cast<int>(st.te.tensors.size());
  st.te.tensors.push_back(copy_tensor);
  ir::Stage copy;
  copy.name = copy_tensor.name;
  copy.output = copy_id;
  std::vector<ir::Expr> idx;
  ir::Expr inside;
  for (size_t k = 0; k < source.shape.size(); ++k) {
    const ir::Axis a{st.next_var++, "ax" + std::to_string(k), source.shape[k]};
    copy.axes.push_back(a);
    const ir::Expr v = ir::make_var(a.var_id, a.name);
    idx.push_back(v);
    const ir::Expr in =
        ir::make_binary(ir::BinaryOp::And, ir::make_binary(ir::BinaryOp::LE, ir::make_int(0), v),
                        ir::make_binary(ir::BinaryOp::LT, v, ir::make_int(source.shape[k])));
    inside = inside ? ir::make_binary(ir::BinaryOp::And, inside, in) : in;
  }
  const ir::Expr load = ir::make_load(source.dtype, tensor, idx);
  // Computed in a loop, the copy's axes are offset by its region, which reaches past the
  // tensor where the reader pads (its reads there are not taken): those elements are 0.
  copy.body =
      inside ? ir::make_select(inside, load, ir::reduce_identity(ir::ReduceKind::Sum, source.dtype))
             : load;
  ir::Stage& reader = st.te.stages[at];
  reader.body = ir::rewrite_loads(reader.body, [&](const ir::Expr& l,
                                                   std::vector<ir::Expr> indices) {
    return ir::make_load(l->dtype, l->var_id == tensor ? copy_id : l->var_id, std::move(indices));
  });
  st.te.stages.insert(st.te.stages.begin() + static_cast<long>(at), copy);
  for (StageState& o : st.stages)
    if (o.attach == Attach::At && o.at_stage >= static_cast<int>(at)) ++o.at_stage;
  st.stages.insert(st.stages.begin() + static_cast<long>(at), StageState{});
  for (const ir::Axis& a : copy.axes)
    st.add_iter(static_cast<int>(at), "s" + std::to_string(at) + "_" + a.name, a.extent, false);
  StageState& cs = st.stages[at];
  for (size_t i = 0; i < cs.iters.size(); ++i) cs.leaves.push_back(static_cast<int>(i));
  cs.shared = true;
}

void apply_bind(ScheduleState& st, const Decision& d) {
  StageState& s = stage_of(st, d);
  require_changeable(s, d);
  const size_t pos = position(s, d, 0);
  if (d.args.size() != 2 || (d.args[1] != 0 && d.args[1] != 1))
    invalid(d, "bind takes a loop and 0 (blocks) or 1 (threads)");
  const ir::LoopKind kind = d.args[1] == 0 ? ir::LoopKind::GpuBlock : ir::LoopKind::GpuThread;
  Iter& it = s.iters[static_cast<size_t>(s.leaves[pos])];
  if (it.kind != ir::LoopKind::Serial) invalid(d, "the loop is already annotated");
  if (it.reduce) invalid(d, "a reduction loop cannot be bound to blocks or threads");
  for (int l : s.leaves)
    if (s.iters[static_cast<size_t>(l)].kind == kind)
      invalid(d, "the stage already has a loop bound to " + std::string(ir::loop_kind_name(kind)));
  if (kind == ir::LoopKind::GpuBlock) {
    if (s.attach != Attach::Root) invalid(d, "only a stage at the root has blocks");
    if (pos != 0) invalid(d, "the block loop is the outermost");
    if (it.extent > INT32_MAX) invalid(d, "a grid has at most 2^31 - 1 blocks");
  } else {
    // Every thread runs the loops outside its own: at the root, only the block loop.
    if (s.attach == Attach::Root &&
        (pos != 1 || s.iters[static_cast<size_t>(s.leaves[0])].kind != ir::LoopKind::GpuBlock))
      invalid(d, "the thread loop of a stage at the root comes right inside its block loop");
    if (it.extent > 1024) invalid(d, "a block has at most 1024 threads");
  }
  it.kind = kind;
  s.transformed = true;
}

void apply_thread_reduce(ScheduleState& st, const Decision& d) {
  StageState& s = stage_of(st, d);
  require_changeable(s, d);
  const size_t pos = position(s, d, 0);
  if (d.args.size() != 2) invalid(d, "thread_reduce takes a loop and a thread count");
  const int64_t threads = d.args[1];
  if (threads < 32 || threads > 1024 || threads % 32 != 0)
    invalid(d, "the threads are whole warps of 32, at most 1024");
  if (s.attach == Attach::At) {
    // Computed inside its consumer's block loop, by all of the block's threads, into shared
    // memory; the consumer's own threads (computed after it) are no more than these.
    const StageState& c = st.stages[static_cast<size_t>(s.at_stage)];
    if (c.attach != Attach::Root || c.leaves[0] != s.at_iter ||
        c.iters[static_cast<size_t>(s.at_iter)].kind != ir::LoopKind::GpuBlock)
      invalid(d, "a stage sharing its reduction is computed at the root or in a block loop");
    for (int l : c.leaves) {
      const Iter& it = c.iters[static_cast<size_t>(l)];
      if (it.kind == ir::LoopKind::GpuThread && it.extent > threads)
        invalid(d, "the consumer has more threads than share the reduction");
    }
    // Their barriers and shuffles take every thread of the block: one count for all.
    for (const StageState& o : st.stages)
      if (&o != &s && o.attach == Attach::At && o.at_stage == s.at_stage &&
          o.at_iter == s.at_iter && o.reduce_threads && o.reduce_threads != threads)
        invalid(d, "another reduction in this block is shared by " +
                       std::to_string(o.reduce_threads) + " threads");
  } else if (s.attach != Attach::Root) {
    invalid(d, "only a stage at the root or in a block loop shares its reduction");
  }
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(d.stage)];
  const ir::DType t = ts.body->dtype;
  if (!warp_shuffles(t)) invalid(d, "a warp shuffles float32, int32 and int64 values only");
  if (pos + 1 != s.leaves.size()) invalid(d, "the shared loop is the innermost");
  for (size_t i = 0; i < s.leaves.size(); ++i) {
    const Iter& it = s.iters[static_cast<size_t>(s.leaves[i])];
    if (it.reduce != (i == pos)) invalid(d, "the shared loop is the stage's only reduction loop");
    if (it.kind == ir::LoopKind::GpuThread) invalid(d, "the stage has a thread loop already");
    if (it.kind != ir::LoopKind::Serial && !(i == 0 && it.kind == ir::LoopKind::GpuBlock))
      invalid(d, "the stage's loops are annotated");
  }
  s.iters[static_cast<size_t>(s.leaves[pos])].kind = ir::LoopKind::GpuThread;
  s.reduce_threads = threads;
  s.transformed = true;
  if (s.attach == Attach::At) {
    s.shared = true;
    const Region r = infer_region(st, d.stage, s.at_stage, s.at_iter);
    bool same = !r.min.empty();
    for (size_t j = 0; j < r.extent.size(); ++j) same = same && r.extent[j] == s.iters[j].extent;
    if (!same) invalid(d, "the block's region of the stage differs from one thread's");
    s.region_run = r.run;
  }
}

void apply_tensorize(ScheduleState& st, const Decision& d) {
  StageState& s = stage_of(st, d);
  if (d.args != std::vector<int64_t>{0}) invalid(d, "the only unit is 0 (the target's)");
  if (s.transformed || s.frozen || s.reduce_threads || s.shared || has_attached_at(st, d.stage, -1))
    invalid(d, "the stage's loops are scheduled already");
  std::string why;
  tile_operands(st, d.stage, &why);
  if (!why.empty()) invalid(d, why);
  s.tensorized = true;
  s.transformed = true;
}

struct KindInfo {
  DecisionKind kind;
  std::string_view name;
  bool has_target;
  void (*apply)(ScheduleState&, const Decision&);
};

const std::array<KindInfo, 15> kKinds = {{
    {DecisionKind::Inline, "inline", false, apply_inline},
    {DecisionKind::CacheWrite, "cache_write", false, apply_cache_write},
    {DecisionKind::RFactor, "rfactor", false, apply_rfactor},
    {DecisionKind::ComputeAt, "compute_at", true, apply_compute_at},
    {DecisionKind::Split, "split", false, apply_split},
    {DecisionKind::Reorder, "reorder", false, apply_reorder},
    {DecisionKind::Fuse, "fuse", false, apply_fuse},
    {DecisionKind::Parallel, "parallel", false,
     [](ScheduleState& st, const Decision& d) { annotate(st, d, ir::LoopKind::Parallel); }},
    {DecisionKind::Vectorize, "vectorize", false,
     [](ScheduleState& st, const Decision& d) { annotate(st, d, ir::LoopKind::Vectorized); }},
    {DecisionKind::Unroll, "unroll", false,
     [](ScheduleState& st, const Decision& d) { annotate(st, d, ir::LoopKind::Unrolled); }},
    {DecisionKind::Pack, "pack", false, apply_pack},
    {DecisionKind::CacheRead, "cache_read", false, apply_cache_read},
    {DecisionKind::Bind, "bind", false, apply_bind},
    {DecisionKind::ThreadReduce, "thread_reduce", false, apply_thread_reduce},
    {DecisionKind::Tensorize, "tensorize", false, apply_tensorize},
}};

const KindInfo& info(DecisionKind k) { return kKinds[static_cast<size_t>(k)]; }

}  // namespace

std::string_view decision_kind_name(DecisionKind k) { return info(k).name; }

namespace {

// Only the regions a decision can change are inferred again (the others were checked when
// their stage was attached, or after an earlier decision). A region is a function of the
// program, of whether its stage is a shared copy, and of the loops of the stages it reads
// through (mark_region_readers), not of its own loops: its first indices are expressions of
// those stages' loop variables, and the loops it ranges over (a shared copy's thread
// loops) are among them. The decisions of kinds that change one stage's loops and
// annotations (and nothing of the program or of other stages; a shared reduction the
// stage's own flag too) change the regions read through that stage and no other.
bool changes_one_stage(DecisionKind k) {
  switch (k) {
    case DecisionKind::Split:
    case DecisionKind::Reorder:
    case DecisionKind::Fuse:
    case DecisionKind::Parallel:
    case DecisionKind::Vectorize:
    case DecisionKind::Unroll:
    case DecisionKind::Pack:
    case DecisionKind::Bind:
    case DecisionKind::ThreadReduce:
    case DecisionKind::Tensorize:
      return true;
    default:
      return false;
  }
}

// Marks the stages whose loops the region of attached stage `p` is inferred from: its
// consumer and the stages attached beside it (infer_region's readers), and, for those that
// are attached themselves, the stages their own regions are inferred from (axis_values).
void mark_region_readers(const ScheduleState& st, size_t p, std::vector<bool>& marked) {
  const StageState& ps = st.stages[p];
  const auto mark = [&](size_t reader) {
    if (marked[reader]) return;
    marked[reader] = true;
    if (st.stages[reader].attach == Attach::At) mark_region_readers(st, reader, marked);
  };
  mark(static_cast<size_t>(ps.at_stage));
  for (size_t q = 0; q < st.stages.size(); ++q) {
    const StageState& qs = st.stages[q];
    if (q != p && qs.attach == Attach::At && qs.at_stage == ps.at_stage && qs.at_iter == ps.at_iter)
      mark(q);
  }
}

// What a decision on one stage may break for the others: a stage computed inside a loop has
// its region inferred from every reader there, the consumer and stages attached beside it.
// The consumer's loops are frozen, but a reader attached beside it may still be split,
// fused or reordered; its change must leave the region affine and of the recorded size.
// Readers come after the stages they read, so the regions are checked last stage first: a
// region read through an attached reader is inferred after that reader's own was found
// affine (axis_values asserts that it is).
void check_attached_regions(const ScheduleState& st, const Decision& d) {
  for (size_t p = st.stages.size(); p-- > 0;) {
    const StageState& ps = st.stages[p];
    if (ps.attach != Attach::At) continue;
    if (changes_one_stage(d.kind) &&
        (static_cast<int>(p) != d.stage || d.kind != DecisionKind::ThreadReduce)) {
      std::vector<bool> readers(st.stages.size());
      mark_region_readers(st, p, readers);
      if (!readers.at(static_cast<size_t>(d.stage))) continue;
    }
    const Region r = infer_region(st, static_cast<int>(p), ps.at_stage, ps.at_iter);
    if (r.min.empty())
      invalid(d, "stage " + std::to_string(p) +
                     " is computed beside this stage, whose loops would no longer give it an "
                     "affine region");
    for (size_t j = 0; j < r.extent.size(); ++j)
      if (r.extent[j] != ps.iters[j].extent || r.run[j] != ps.region_run.at(j))
        invalid(d, "stage " + std::to_string(p) +
                       " is computed beside this stage, whose loops would change its region");
  }
}

}  // namespace

void apply_decision_in_place(ScheduleState& st, const Decision& d) {
  info(d.kind).apply(st, d);
  check_attached_regions(st, d);
}

void apply_decision(ScheduleState& st, const Decision& d) {
  ScheduleState next = st;
  apply_decision_in_place(next, d);
  st = std::move(next);
}

ScheduleState apply_schedule(const ir::TeProgram& program, const std::vector<Decision>& schedule) {
  ScheduleState st(program);
  for (const Decision& d : schedule) apply_decision(st, d);
  return st;
}

std::string decision_str(const Decision& d) {
  std::ostringstream os;
  os << info(d.kind).name << " " << d.stage;
  if (info(d.kind).has_target) os << " " << d.target;
  os << " [";
  for (size_t i = 0; i < d.args.size(); ++i) os << (i ? ", " : "") << d.args[i];
  os << "]";
  return os.str();
}

std::string schedule_str(const std::vector<Decision>& schedule) {
  std::string out;
  for (const Decision& d : schedule) out += decision_str(d) + "\n";
  return out;
}

std::optional<std::vector<Decision>> parse_schedule(const std::string& text) {
  std::vector<Decision> out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    for (char& c : line)
      if (c == '[' || c == ']' || c == ',') c = ' ';
    std::istringstream in(line);
    std::string name;
    in >> name;
    const KindInfo* k = nullptr;
    for (const KindInfo& i : kKinds)
      if (i.name == name) k = &i;
    if (!k) return std::nullopt;
    Decision d{k->kind, 0, -1, {}};
    if (!(in >> d.stage)) return std::nullopt;
    if (k->has_target && !(in >> d.target)) return std::nullopt;
    int64_t v;
    while (in >> v) d.args.push_back(v);
    if (!in.eof()) return std::nullopt;
    out.push_back(d);
  }
  return out;
}

namespace {
constexpr std::string_view kRecordHeader = "tlmc-schedule 1\n";
}  // namespace

std::string schedule_record_text(const std::vector<Decision>& schedule) {
  return std::string(kRecordHeader) + schedule_str(schedule);
}

std::optional<std::vector<Decision>> parse_schedule_record(const std::string& text) {
  if (text.compare(0, kRecordHeader.size(), kRecordHeader) != 0) return std::nullopt;
  return parse_schedule(text.substr(kRecordHeader.size()));
}

}  // namespace tlmc::scheduler
