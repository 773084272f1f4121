// CUDA: multi-level tiling of a stage at the root that reads a reduction it can compute per
// tile (a product or a convolution, with its epilogue or its copy-out). Each spatial axis of
// the stage splits into blocks, virtual threads, threads and a per-thread tile; the block
// loops are fused and bound to blockIdx, the thread loops to threadIdx; the reduction is
// computed inside the thread loop into registers, its reduction axes split into an outer
// loop and a tile, and at each outer step the block's threads fill the shared copies of its
// operands together, 16 bytes a thread at a time where that is aligned (Ansor's GPU sketch
// "SSSRRSRS": S block, S virtual thread, S thread,
// then the reduction's R outer, R tile and S register tile). A thread's V virtual threads
// along an axis are V register tiles a block's threads apart: the threads of a warp touch
// neighbouring elements (coalesced stores, shared reads without bank conflicts) where one
// tile of V times the size would have them stride by it. The threads per block, the shared
// memory and the register tile are bounded by the descriptor, and every listed value leaves
// a way to finish the sketch within them.
#include "scheduler/sketch_analysis.h"
#include "scheduler/sketch_rules.h"
#include "scheduler/sketch_steps.h"

namespace tlmc::scheduler {
namespace {

// Most elements of a thread's register tile, and along one axis (registers cannot be
// bounded before ptxas has seen the code; this keeps the accumulators well inside 255).
constexpr int64_t kRegisterTile = 64;
constexpr int64_t kRegisterTileAxis = 8;
// Most virtual threads along one axis (their tiles count in the register tile's bounds).
constexpr int64_t kVirtualThreadsAxis = 8;
// Largest tile of a reduction axis per shared-memory step.
constexpr int64_t kReduceTile = 64;
// -O0, at most: a warp's threads along the innermost axis (its loads and stores coalesce),
// eight along the next (256 threads a block); a register tile of 4 x 4 on those two axes.
constexpr int64_t kDefaultInnerThreads = 32;
constexpr int64_t kDefaultNextThreads = 8;
constexpr int64_t kDefaultRegisterTileAxis = 4;

// Whether `e` is a multiple of `m` whatever its variables' values: a sum of such terms, or a
// product with such a factor.
bool is_multiple_of(const ir::Expr& e, int64_t m) {
  int64_t c;
  if (ir::is_int_const(e, &c)) return c % m == 0;
  if (e->kind != ir::ExprKind::Binary) return false;
  switch (e->binary_op) {
    case ir::BinaryOp::Add:
    case ir::BinaryOp::Sub:
      return is_multiple_of(e->args[0], m) && is_multiple_of(e->args[1], m);
    case ir::BinaryOp::Mul:
      return is_multiple_of(e->args[0], m) || is_multiple_of(e->args[1], m);
    default:
      return false;
  }
}

// Whether the shared copy `c` (computed at its place) can be filled four float32 elements
// at a time, one 16-byte load and store each: it copies its source element for element
// (behind the copy's test of the source's bounds, which the emitter makes once for the
// four: codegen/emit_cuda_kernel.cc), and the four elements of each are consecutive in both
// and start at multiples of 16 bytes: the source's rows and the copy's rows are multiples of
// four elements long, and the copy's first column, in the block's and steps' indices, is a
// multiple of four. (The buffers themselves start at multiples of 16: the API's pointers,
// the workspace's and the weights' offsets, the shared arrays.)
bool copies_sixteen_bytes(const ScheduleState& st, int c) {
  const ir::Stage& ct = st.te.stages[static_cast<size_t>(c)];
  const StageState& cs = st.stages[static_cast<size_t>(c)];
  const ir::Expr& body = ct.body->kind == ir::ExprKind::Select ? ct.body->args[1] : ct.body;
  if (body->kind != ir::ExprKind::Load || body->dtype != ir::DType::Float32 ||
      body->args.size() != ct.axes.size() || ct.axes.empty())
    return false;
  for (size_t d = 0; d < ct.axes.size(); ++d)
    if (body->args[d]->kind != ir::ExprKind::Var || body->args[d]->var_id != ct.axes[d].var_id)
      return false;
  const ir::Shape& shape = st.te.tensor(body->var_id).shape;
  const size_t last = ct.axes.size() - 1;
  if (shape.size() != ct.axes.size() || shape[last] % 4 != 0 || cs.iters[last].extent % 4 != 0)
    return false;
  const Region region = infer_region(st, c, cs.at_stage, cs.at_iter);
  return !region.min.empty() && is_multiple_of(region.min[last], 4);
}

struct Tiled {
  int root;
  int reduction;
  std::vector<int> copies;  // shared copies the reduction reads
};

std::vector<Tiled> tiled_stages(const SketchBuild& b) {
  std::vector<Tiled> out;
  const ScheduleState& st = b.base.state;
  for (size_t p = 0; p < st.stages.size(); ++p) {
    if (!is_gpu_tiled_reduction(st, static_cast<int>(p))) continue;
    const int root = st.consumers(st.te.stages[p].output)[0];
    if (b.claimed[p] || b.claimed[static_cast<size_t>(root)]) continue;
    Tiled t{root, static_cast<int>(p), {}};
    for (int operand : ir::stage_operands(st.te.stages[p])) {
      const int producer = st.te.tensor(operand).stage;
      if (producer >= 0 && st.stages[static_cast<size_t>(producer)].shared)
        t.copies.push_back(producer);
    }
    out.push_back(t);
  }
  return out;
}

// The product of the extents of the stage's loops named `names` that exist.
int64_t product_of(const SketchRun& r, int stage, const std::vector<std::string>& names) {
  const StageState& s = r.state.stages.at(static_cast<size_t>(stage));
  int64_t p = 1;
  for (int l : s.leaves) {
    const Iter& it = s.iters[static_cast<size_t>(l)];
    for (const std::string& n : names)
      if (it.name == n) p *= it.extent;
  }
  return p;
}

int64_t extent_of(const SketchRun& r, int stage, const std::string& name) {
  const StageState& s = r.state.stages.at(static_cast<size_t>(stage));
  return s.iters[static_cast<size_t>(s.leaves[static_cast<size_t>(r.position(stage, name))])]
      .extent;
}

void tile(SketchBuild& b, const Tiled& t) {
  const ScheduleState& st = b.base.state;
  const int root = t.root, red = t.reduction;
  b.claimed[static_cast<size_t>(root)] = b.claimed[static_cast<size_t>(red)] = true;
  for (int c : t.copies) b.claimed[static_cast<size_t>(c)] = true;
  const ir::Stage& rs = st.te.stages[static_cast<size_t>(root)];
  const StageState& rss = st.stages[static_cast<size_t>(root)];
  const std::string role = b.role(root), red_role = b.role(red);
  const int64_t max_threads = std::min<int64_t>(b.target.gpu.threads_per_block, 1024);
  // Beyond what a block declares statically, its shared copies are dynamic, opted in; one
  // block and its 1 KiB reserve fit the SM too.
  const int64_t smem =
      std::min<int64_t>(b.target.gpu.smem_optin_per_block,
                        (static_cast<int64_t>(b.target.gpu.smem_per_sm) - 1024) / 128 * 128);

  std::vector<std::string> names, inner_names, thread_names, virtual_names, block_names;
  for (size_t a = 0; a < rs.axes.size(); ++a) {
    names.push_back(rss.iters[a].name);
    inner_names.push_back(names.back() + ".1");
    thread_names.push_back(names.back() + ".0.1");
    virtual_names.push_back(names.back() + ".0.0.1");
    block_names.push_back(names.back() + ".0.0.0");
  }
  // A thread's accumulators: its register tile times its virtual threads.
  std::vector<std::string> per_thread = inner_names;
  per_thread.insert(per_thread.end(), virtual_names.begin(), virtual_names.end());
  for (size_t a = 0; a < names.size(); ++a) {
    const std::string n = names[a];
    const std::string axis = rs.axes[a].name;
    // The thread's register tile along the axis.
    b.add_space(
        Space{SpaceKind::Tile, role, axis + ".reg"},
        [root, n, per_thread](const SketchRun& r) {
          const int64_t so_far = product_of(r, root, per_thread);
          return divisors(extent_of(r, root, n),
                          std::min(kRegisterTileAxis, kRegisterTile / so_far));
        },
        [root, n](SketchRun& r, int64_t v) {
          r.emit(Decision{DecisionKind::Split, root, -1, {r.position(root, n), v}});
        },
        at_most(a + 2 >= names.size() ? kDefaultRegisterTileAxis : 1));
    b.steps.back().needs_completion = true;
    // The threads along the axis.
    b.add_space(
        Space{SpaceKind::Tile, role, axis + ".threads"},
        [root, n, thread_names, max_threads](const SketchRun& r) {
          const int64_t so_far = product_of(r, root, thread_names);
          return divisors(extent_of(r, root, n + ".0"), max_threads / so_far);
        },
        [root, n](SketchRun& r, int64_t v) {
          r.emit(Decision{DecisionKind::Split, root, -1, {r.position(root, n + ".0"), v}});
        },
        at_most(a + 1 == names.size()   ? kDefaultInnerThreads
                : a + 2 == names.size() ? kDefaultNextThreads
                                        : 1));
    b.steps.back().needs_completion = true;
    // The virtual threads along the axis (-O0: none).
    b.add_space(
        Space{SpaceKind::Tile, role, axis + ".vthreads"},
        [root, n, per_thread](const SketchRun& r) {
          const int64_t so_far = product_of(r, root, per_thread);
          return divisors(extent_of(r, root, n + ".0.0"),
                          std::min(kVirtualThreadsAxis, kRegisterTile / so_far));
        },
        [root, n](SketchRun& r, int64_t v) {
          r.emit(Decision{DecisionKind::Split, root, -1, {r.position(root, n + ".0.0"), v}});
        },
        at_most(1));
    b.steps.back().needs_completion = true;
  }
  // Blocks outside threads outside the virtual threads outside the register tile; the
  // blocks and the threads each fused; bound; the reduction computed per thread.
  const int64_t axes = static_cast<int64_t>(names.size());
  b.add_fixed(
      [root, red, axes, block_names, thread_names, virtual_names, inner_names](SketchRun& r) {
        std::vector<int64_t> order;
        for (const auto* group : {&block_names, &thread_names, &virtual_names, &inner_names})
          for (const std::string& n : *group) order.push_back(r.position(root, n));
        r.emit(Decision{DecisionKind::Reorder, root, -1, order});
        if (axes > 1) {
          r.emit(Decision{DecisionKind::Fuse, root, -1, {0, axes}});
          r.emit(Decision{DecisionKind::Fuse, root, -1, {1, axes}});
        }
        r.emit(Decision{DecisionKind::Bind, root, -1, {0, 0}});
        r.emit(Decision{DecisionKind::Bind, root, -1, {1, 1}});
        r.emit(Decision{DecisionKind::ComputeAt, red, root, {1}});
      });
  // The reduction's tile per shared-memory step, axis by axis.
  const ir::Stage& ps = st.te.stages[static_cast<size_t>(red)];
  std::vector<std::string> reduce_names;
  for (size_t k = 0; k < ps.reduce_axes.size(); ++k) {
    const std::string n = st.stages[static_cast<size_t>(red)].iters[ps.axes.size() + k].name;
    reduce_names.push_back(n);
    b.add_space(
        Space{SpaceKind::Tile, red_role, ps.reduce_axes[k].name + ".step"},
        [red, n](const SketchRun& r) { return divisors(extent_of(r, red, n), kReduceTile); },
        [red, n](SketchRun& r, int64_t v) {
          r.emit(Decision{DecisionKind::Split, red, -1, {r.position(red, n), v}});
        },
        at_most(8));
    b.steps.back().needs_completion = true;
  }
  // The reduction's loops: the outer steps, the tiles, then its register tile; the shared
  // copies computed at the last outer step, filled by the block's threads together.
  const std::vector<int> copies = t.copies;
  b.add_fixed([root, red, reduce_names, copies, smem](SketchRun& r) {
    const StageState& p = r.state.stages[static_cast<size_t>(red)];
    std::vector<int64_t> order;
    for (const std::string& n : reduce_names) order.push_back(r.position(red, n + ".0"));
    for (const std::string& n : reduce_names) order.push_back(r.position(red, n + ".1"));
    for (size_t i = 0; i < p.leaves.size(); ++i)
      if (!p.iters[static_cast<size_t>(p.leaves[i])].reduce)
        order.push_back(static_cast<int64_t>(i));
    r.emit(Decision{DecisionKind::Reorder, red, -1, order});
    int64_t bytes = 0;
    // The block's threads: the root's loop bound to them, second after the reorder.
    const StageState& tiled = r.state.stages[static_cast<size_t>(root)];
    const int64_t threads = tiled.iters[static_cast<size_t>(tiled.leaves[1])].extent;
    for (int c : copies) {
      r.emit(Decision{
          DecisionKind::ComputeAt, c, red, {static_cast<int64_t>(reduce_names.size()) - 1}});
      const StageState& cs = r.state.stages[static_cast<size_t>(c)];
      const ir::Stage& ct = r.state.te.stages[static_cast<size_t>(c)];
      int64_t elements = 1;
      for (size_t j = 0; j < ct.axes.size(); ++j) elements *= cs.iters[j].extent;
      // Each array from a multiple of 16 bytes (ir::shared_offsets).
      const int64_t size =
          elements * static_cast<int64_t>(ir::dtype_size(r.state.te.tensor(ct.output).dtype));
      bytes += (size + 15) / 16 * 16;
      if (bytes > smem)
        throw InvalidDecision("the shared copies take " + std::to_string(bytes) +
                              " bytes, more than a block's " + std::to_string(smem));
      const int64_t loops = static_cast<int64_t>(cs.leaves.size());
      // Each thread's share element by element, or in fours where aligned (one 16-byte load
      // and store each).
      const bool wide = copies_sixteen_bytes(r.state, c);
      if (loops > 1) r.emit(Decision{DecisionKind::Fuse, c, -1, {0, loops}});
      const int64_t share = largest_divisor_at_most(wide ? elements / 4 : elements, threads);
      r.emit(Decision{DecisionKind::Split, c, -1,
                      wide ? std::vector<int64_t>{0, share, 4} : std::vector<int64_t>{0, share}});
      r.emit(Decision{DecisionKind::Bind, c, -1, {1, 1}});
      if (wide) r.emit(Decision{DecisionKind::Vectorize, c, -1, {2}});
    }
  });
  add_unroll_space(b, red, smallest());
}

class GpuMultiLevelTilingRule : public SketchRule {
 public:
  std::string_view name() const override { return "multi_level_tiling"; }
  bool applies(const SketchBuild& b) const override { return !tiled_stages(b).empty(); }
  void apply(SketchBuild& b) const override {
    for (const Tiled& t : tiled_stages(b)) tile(b, t);
  }
};

}  // namespace

std::unique_ptr<SketchRule> make_gpu_multi_level_tiling_rule() {
  return std::make_unique<GpuMultiLevelTilingRule>();
}

}  // namespace tlmc::scheduler
