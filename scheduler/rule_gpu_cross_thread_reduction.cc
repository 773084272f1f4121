// A CUDA target's cross-thread reduction, for a reduction whose output elements share no
// operand (a row's sum, maximum or mean: Softmax, LayerNormalization, ReduceMean,
// GlobalAveragePool), which the multi-level tiling leaves alone: one output element a block,
// the block's threads sharing its reduction (ThreadReduce: each accumulates a strided part,
// then warp shuffles and shared memory combine the parts). One thread an element
// (rule_gpu_thread_per_element.cc) leaves such a stage a few threads, each reading its
// reduction alone; here every warp reads 32 consecutive iterations at once.
//
// Where a pointwise stage reads such reductions and nothing else does (Softmax's output reads
// the row's maximum and sum, LayerNormalization's its mean and variance, the sum reads the
// maximum), the reductions are computed inside that stage's block loop, into shared memory,
// and the stage's elements follow, spread over the same threads: one kernel, whose rows are
// read from DRAM once, where there were three. A block is then one value of the stage's axes
// that index the reductions (a row); its threads take the other axes (the row's elements).
//
// The rule forks: both sketches are kept, the search ranks them; the one with it comes first
// (its default point is the -O0 schedule) where a thread an element would leave most of the
// GPU idle.
#include <algorithm>
#include <optional>
#include <set>

#include "scheduler/sketch_analysis.h"
#include "scheduler/sketch_rules.h"
#include "scheduler/sketch_steps.h"

namespace tlmc::scheduler {
namespace {

// -O0: threads sharing a reduction, at most (the iterations rounded down to whole warps).
constexpr int64_t kDefaultThreads = 256;

struct Extents {
  int64_t spatial = 1, reduce = 1;
};

Extents extents(const ScheduleState& st, size_t s) {
  const ir::Stage& ts = st.te.stages[s];
  const StageState& ss = st.stages[s];
  Extents e;
  for (size_t a = 0; a < ss.iters.size(); ++a)
    (a < ts.axes.size() ? e.spatial : e.reduce) *= ss.iters[a].extent;
  return e;
}

// Products of at most this many rows (GEMV-like) are the few-row rule's.
constexpr int64_t kFewRows = 4;

// The operand of `ts` with the most elements: a product's weight.
int largest_operand(const ScheduleState& st, const ir::Stage& ts) {
  int best = -1;
  int64_t most = -1;
  for (int t : ir::stage_operands(ts)) {
    int64_t n = 1;
    for (int64_t d : st.te.tensor(t).shape) n *= d;
    if (n > most) most = n, best = t;
  }
  return best;
}

// The rows of a product: its output elements that read the same elements of its largest
// operand (the extents of the axes that do not index it).
int64_t rows(const ScheduleState& st, const ir::Stage& ts) {
  const std::set<size_t> used = axes_indexing(ts, largest_operand(st, ts));
  int64_t n = 1;
  for (size_t a = 0; a < ts.axes.size(); ++a)
    if (!used.count(a)) n *= ts.axes[a].extent;
  return n;
}

// Whether the warp's lanes, striding over the reduction, read consecutive elements of the
// largest operand: its last index is a reduction variable alone (a Gemm's weight with
// transB, [N, K]).
bool lanes_read_consecutively(const ScheduleState& st, const ir::Stage& ts) {
  const int weight = largest_operand(st, ts);
  bool consecutive = false;
  ir::visit_expr(ts.body, [&](const ir::ExprNode& n) {
    if (n.kind != ir::ExprKind::Load || n.var_id != weight || n.args.empty()) return;
    const ir::Expr& last = n.args.back();
    if (last->kind != ir::ExprKind::Var) return;
    for (const ir::Axis& r : ts.reduce_axes)
      if (r.var_id == last->var_id) consecutive = true;
  });
  return consecutive;
}

// Which reductions a rule takes: those with nothing to share (a row's sum), or products of
// few rows (one output row reads a weight's column once: nothing worth sharing either).
enum class Taken { NothingShared, FewRows };

// Stages the rule takes: unclaimed reductions at the root of the kind `taken`, of more
// iterations than a warp has lanes, of a type warps shuffle.
std::vector<int> reductions(const SketchBuild& b, Taken taken) {
  std::vector<int> out;
  const ScheduleState& st = b.base.state;
  for (int s : b.unclaimed_roots()) {
    const ir::Stage& ts = st.te.stages[static_cast<size_t>(s)];
    const ir::DType t = ts.body->dtype;
    if (ir::is_pointwise(ts) || st.stages[static_cast<size_t>(s)].shared) continue;
    const bool shares = !shared_operands(ts).empty();
    if (taken == Taken::NothingShared ? shares : !shares || rows(st, ts) > kFewRows) continue;
    if (!warp_shuffles(t)) continue;
    const Extents e = extents(st, static_cast<size_t>(s));
    if (e.reduce > b.target.gpu.warp && e.spatial <= INT32_MAX) out.push_back(s);
  }
  return out;
}

// The thread counts listed for reductions of `reduce` iterations: whole warps, doubling, up
// to the first count that covers them; and the -O0 policy's.
std::vector<int64_t> thread_counts(const ir::GpuLimits& gpu, int64_t reduce) {
  const int64_t most = std::min<int64_t>(gpu.threads_per_block, 1024);
  std::vector<int64_t> out;
  for (int64_t t = gpu.warp; t <= most; t *= 2) {
    out.push_back(t);
    if (t >= reduce) break;
  }
  return out;
}
Fallback default_threads(const ir::Target& target, int64_t reduce) {
  const int64_t warp = target.gpu.warp;
  return at_most(std::clamp<int64_t>(reduce / warp * warp, warp, kDefaultThreads));
}

// Fuses a stage's spatial loops into one and its reduction loops into one: [s, r], [r].
void fuse_spatial_and_reduction(SketchRun& r, int stage, size_t spatial, size_t reduce) {
  if (reduce > 1)
    r.emit(Decision{DecisionKind::Fuse,
                    stage,
                    -1,
                    {static_cast<int64_t>(spatial), static_cast<int64_t>(reduce)}});
  if (spatial > 1)
    r.emit(Decision{DecisionKind::Fuse, stage, -1, {0, static_cast<int64_t>(spatial)}});
}

size_t spatial_axes(const ScheduleState& st, int stage) {
  return st.te.stages[static_cast<size_t>(stage)].axes.size();
}
size_t reduce_axes(const ScheduleState& st, int stage) {
  return st.stages[static_cast<size_t>(stage)].iters.size() - spatial_axes(st, stage);
}

// A reduction alone: one element a block.
void share_reduction(SketchBuild& b, int stage) {
  b.claimed[static_cast<size_t>(stage)] = true;
  const size_t spatial = spatial_axes(b.base.state, stage);
  const size_t reduce = reduce_axes(b.base.state, stage);
  const Extents e = extents(b.base.state, static_cast<size_t>(stage));
  b.add_fixed([stage, spatial, reduce](SketchRun& r) {
    fuse_spatial_and_reduction(r, stage, spatial, reduce);
    if (spatial > 0) r.emit(Decision{DecisionKind::Bind, stage, -1, {0, 0}});
  });
  const int64_t last = spatial > 0 ? 1 : 0;
  b.add_space(
      Space{SpaceKind::Tile, b.role(stage), "threads"},
      [gpu = b.target.gpu, e](const SketchRun&) { return thread_counts(gpu, e.reduce); },
      [stage, last](SketchRun& r, int64_t t) {
        r.emit(Decision{DecisionKind::ThreadReduce, stage, -1, {last, t}});
      },
      default_threads(b.target, e.reduce));
}

// A pointwise stage at the root and the reductions computed in its block loop.
struct Group {
  int consumer = -1;
  std::vector<int> reductions;  // in stage order
  std::vector<int64_t> order;   // the consumer's axes: those indexing the reductions first
  size_t rows = 0;              // how many axes index them
  int64_t reduce = 1;           // the most iterations of one of the reductions
};

// The consumer's loops, the reductions computed in its block loop, `threads` sharing each.
void emit_group(SketchRun& r, const Group& g, int64_t threads) {
  const ScheduleState& st = r.state;
  const int c = g.consumer;
  const size_t rank = g.order.size();
  std::vector<int64_t> identity(rank);
  for (size_t a = 0; a < rank; ++a) identity[a] = static_cast<int64_t>(a);
  if (g.order != identity) r.emit(Decision{DecisionKind::Reorder, c, -1, g.order});
  if (g.rows > 1) r.emit(Decision{DecisionKind::Fuse, c, -1, {0, static_cast<int64_t>(g.rows)}});
  if (rank - g.rows > 1)
    r.emit(Decision{DecisionKind::Fuse, c, -1, {1, static_cast<int64_t>(rank - g.rows)}});
  // A row of one element is stored by one thread (a loop of one iteration).
  if (rank == g.rows) r.emit(Decision{DecisionKind::Split, c, -1, {0, 1}});
  r.emit(Decision{DecisionKind::Bind, c, -1, {0, 0}});
  if (rank > g.rows) {
    // The row's elements: consecutive ones on consecutive threads, in rounds.
    const int64_t elements = r.state.leaf(c, 1).extent;
    r.emit(Decision{DecisionKind::Split, c, -1, {1, std::min(threads, elements)}});
    r.emit(Decision{DecisionKind::Reorder, c, -1, {0, 2, 1}});
  }
  r.emit(Decision{DecisionKind::Bind, c, -1, {1, 1}});
  for (auto p = g.reductions.rbegin(); p != g.reductions.rend(); ++p)
    r.emit(Decision{DecisionKind::ComputeAt, *p, c, {0}});
  for (int p : g.reductions) {
    const size_t spatial = spatial_axes(st, p);
    fuse_spatial_and_reduction(r, p, spatial, reduce_axes(st, p));
    r.emit(Decision{DecisionKind::ThreadReduce, p, -1, {spatial > 0 ? 1 : 0, threads}});
  }
}

// The group of pointwise stage `c`, where every stage it can compute in its loops is one of
// `candidates`, some axis of it indexes them, and the group's decisions apply.
std::optional<Group> group_of(const SketchBuild& b, int c, const std::vector<int>& candidates) {
  const ScheduleState& st = b.base.state;
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(c)];
  if (!ir::is_pointwise(ts) || st.stages[static_cast<size_t>(c)].shared) return std::nullopt;
  Group g;
  g.consumer = c;
  g.reductions = attachable_producers(st, c);
  if (g.reductions.empty()) return std::nullopt;
  for (int p : g.reductions) {
    if (std::find(candidates.begin(), candidates.end(), p) == candidates.end()) return std::nullopt;
    g.reduce = std::max(g.reduce, extents(st, static_cast<size_t>(p)).reduce);
  }
  const std::set<size_t> rows = axes_indexing_any(st, ts, g.reductions);
  if (rows.empty()) return std::nullopt;
  // Each reduction the stage reads is indexed by all of the rows: one of fewer axes (a
  // column's sum beside a row's) would be computed whole again in every block.
  for (int p : g.reductions) {
    const std::set<size_t> used = axes_indexing(ts, st.te.stages[static_cast<size_t>(p)].output);
    if (!used.empty() && used != rows) return std::nullopt;
  }
  for (size_t a : rows) g.order.push_back(static_cast<int64_t>(a));
  for (size_t a = 0; a < ts.axes.size(); ++a)
    if (!rows.count(a)) g.order.push_back(static_cast<int64_t>(a));
  g.rows = rows.size();
  // Every thread count must apply: the regions, the loops.
  for (int64_t t : thread_counts(b.target.gpu, g.reduce)) {
    SketchRun trial = b.base;
    try {
      emit_group(trial, g, t);
    } catch (const InvalidDecision&) {
      return std::nullopt;
    }
  }
  return g;
}

void share_reductions_in_consumer(SketchBuild& b, const Group& g) {
  b.claimed[static_cast<size_t>(g.consumer)] = true;
  for (int p : g.reductions) b.claimed[static_cast<size_t>(p)] = true;
  b.add_space(
      Space{SpaceKind::Tile, b.role(g.consumer), "threads"},
      [gpu = b.target.gpu, reduce = g.reduce](const SketchRun&) {
        return thread_counts(gpu, reduce);
      },
      [g](SketchRun& r, int64_t t) { emit_group(r, g, t); }, default_threads(b.target, g.reduce));
}

// The reductions of kind `taken`, each shared by the threads of its block, computed in the
// block loop of the pointwise stage that alone reads them where there is one.
void share(SketchBuild& b, Taken taken) {
  const std::vector<int> candidates = reductions(b, taken);
  for (int c : b.unclaimed_roots())
    if (std::optional<Group> g = group_of(b, c, candidates)) share_reductions_in_consumer(b, *g);
  for (int s : reductions(b, taken)) share_reduction(b, s);
}

class GpuCrossThreadReductionRule : public SketchRule {
 public:
  std::string_view name() const override { return "cross_thread_reduction"; }
  bool applies(const SketchBuild& b) const override {
    return !reductions(b, Taken::NothingShared).empty();
  }
  bool forks() const override { return true; }
  // First where one thread an output element would keep fewer threads busy than a quarter
  // of what the GPU holds resident.
  bool first(const SketchBuild& b) const override {
    int64_t threads = 0;
    for (int s : reductions(b, Taken::NothingShared))
      threads = std::max(threads, extents(b.base.state, static_cast<size_t>(s)).spatial);
    return threads < static_cast<int64_t>(b.target.gpu.sms) * b.target.gpu.threads_per_sm / 4;
  }
  void apply(SketchBuild& b) const override { share(b, Taken::NothingShared); }
};

// A product of few rows (a GEMV: one token's product with a vocabulary, a classifier's)
// gives the multi-level tiling a row or so of threads and reuses nothing: each element of
// its weight is read once. Here, like a reduction with nothing to share, each output element
// is a block whose threads stride over the reduction together and combine their parts by
// shuffles. The rule forks before the shared copies (the tiled sketch stays); its sketch
// comes first where the lanes then read the weight consecutively (the reduction is its
// innermost dimension), the case that rule serves best.
//
// It runs before shared_cache_read (a structural rule, whose copies the tiled products need)
// and its steps name stages by index. A copy is inserted before its reader, so a tiled
// product at a lower index than a few-row one would move the stage its steps name. Partitions
// hold one anchor product today; where a subgraph holds both, the rule stands aside.
class GpuFewRowProductRule : public SketchRule {
 public:
  std::string_view name() const override { return "cross_thread_product"; }
  bool applies(const SketchBuild& b) const override {
    const std::vector<int> taken = reductions(b, Taken::FewRows);
    if (taken.empty()) return false;
    const int first = *std::min_element(taken.begin(), taken.end());
    for (int s = 0; s < first; ++s)
      if (!b.claimed[static_cast<size_t>(s)] && is_gpu_tiled_reduction(b.base.state, s))
        return false;
    return true;
  }
  bool forks() const override { return true; }
  bool first(const SketchBuild& b) const override {
    for (int s : reductions(b, Taken::FewRows))
      if (!lanes_read_consecutively(b.base.state, b.base.state.te.stages[static_cast<size_t>(s)]))
        return false;
    return true;
  }
  void apply(SketchBuild& b) const override { share(b, Taken::FewRows); }
};

}  // namespace

std::unique_ptr<SketchRule> make_gpu_cross_thread_reduction_rule() {
  return std::make_unique<GpuCrossThreadReductionRule>();
}

std::unique_ptr<SketchRule> make_gpu_few_row_product_rule() {
  return std::make_unique<GpuFewRowProductRule>();
}

}  // namespace tlmc::scheduler
