// Multi-level tiling with the consumer fused (Ansor's "SSRSRS" on CPU). A root stage that
// reads reductions (an anchor's epilogue, or the copy-out of a cache stage) is tiled in three
// levels per axis: outer loops (fused, run in parallel), a middle level (a cache block) and
// an inner tile. Each reduction is computed per tile, at the outer or the middle level, into
// a local buffer; its own loops tile again: reduction outer levels, spatial middle, reduction
// inner, spatial inner (the register tile, vectorised and unrolled). Axes the reductions
// do not read along stay whole inside the tile, so a row reduction is not recomputed.
#include <algorithm>
#include <map>
#include <utility>

#include "scheduler/sketch_analysis.h"
#include "scheduler/sketch_rules.h"
#include "scheduler/sketch_steps.h"
#include "scheduler/tile_product.h"

namespace tlmc::scheduler {
namespace {

// Vectors along the innermost axis of a register tile, at most.
constexpr int64_t kMaxTileVectors = 8;

enum class AxisUse { Unit, Whole, Split };

std::string iter_name(const ScheduleState& st, int stage, size_t iter) {
  return st.stages[static_cast<size_t>(stage)].iters[iter].name;
}

// Positions of named loops, for a reorder.
std::vector<int64_t> positions(const SketchRun& r, int stage,
                               const std::vector<std::string>& names) {
  std::vector<int64_t> out;
  for (const std::string& n : names) out.push_back(r.position(stage, n));
  return out;
}

// The (producer axis, root axis) pairs of the root's loads of a producer, in load order: a
// producer axis read at a root axis's plain variable.
std::vector<std::pair<size_t, size_t>> axes_read_along(const ir::Stage& root,
                                                       const ir::Stage& producer) {
  std::vector<std::pair<size_t, size_t>> out;
  ir::visit_expr(root.body, [&](const ir::ExprNode& n) {
    if (n.kind != ir::ExprKind::Load || n.var_id != producer.output) return;
    for (size_t d = 0; d < n.args.size() && d < producer.axes.size(); ++d)
      for (size_t a = 0; a < root.axes.size(); ++a)
        if (n.args[d]->kind == ir::ExprKind::Var && n.args[d]->var_id == root.axes[a].var_id)
          out.emplace_back(d, a);
  });
  return out;
}

// Names of the root's axes in spaces: the name of the reduction's axis the root reads
// along it ("oc" rather than the epilogue's "i1"), else its own.
std::vector<std::string> axis_roles(const ScheduleState& st, const ir::Stage& root,
                                    const std::vector<int>& producers) {
  std::vector<std::string> out;
  for (const ir::Axis& a : root.axes) out.push_back(a.name);
  std::vector<bool> named(root.axes.size(), false);
  for (int p : producers) {
    const ir::Stage& ps = st.te.stages[static_cast<size_t>(p)];
    for (const auto& [d, a] : axes_read_along(root, ps))
      if (!named[a]) {
        out[a] = ps.axes[d].name;
        named[a] = true;
      }
  }
  return out;
}

// The root axis the -O0 policy's outer loops lead with (the others cycle inside it): the
// first split axis indexing a constant operand of the reductions that outweighs all their
// other operands together, so that its panel stays in cache while the smaller operands
// cycle under it and the threads split it (the 768 x 50257 weights of a language model's
// head, read once rather than once per tile of rows); -1 for none.
int lead_axis(const ScheduleState& st, const ir::Stage& root, const std::vector<int>& producers,
              const std::vector<bool>& split) {
  int64_t total = 0, biggest = 0;
  std::set<size_t> axes;
  for (int p : producers) {
    const ir::Stage& ps = st.te.stages[static_cast<size_t>(p)];
    // Producer axis variable -> root axis.
    std::map<int, size_t> to_root;
    for (const auto& [d, a] : axes_read_along(root, ps)) to_root[ps.axes[d].var_id] = a;
    for (int t : ir::stage_operands(ps)) {
      const ir::TeTensor& tensor = st.te.tensor(t);
      const int64_t bytes =
          ir::shape_numel(tensor.shape) * static_cast<int64_t>(ir::dtype_size(tensor.dtype));
      total += bytes;
      if (tensor.stage >= 0 || !tensor.constant || bytes <= biggest) continue;
      biggest = bytes;
      axes.clear();
      ir::visit_expr(ps.body, [&](const ir::ExprNode& n) {
        if (n.kind != ir::ExprKind::Load || n.var_id != t) return;
        for (const ir::Expr& i : n.args)
          for (const auto& [var, a] : to_root)
            if (ir::uses_var(i, var)) axes.insert(a);
      });
    }
  }
  if (2 * biggest <= total) return -1;
  for (size_t a = 0; a < root.axes.size(); ++a)
    if (split[a] && axes.count(a)) return static_cast<int>(a);
  return -1;
}

// The reductions among a root's producers (the others are stages kept for them).
std::vector<int> reductions_of(const ScheduleState& st, const std::vector<int>& producers) {
  std::vector<int> out;
  for (int p : producers)
    if (!ir::is_pointwise(st.te.stages[static_cast<size_t>(p)])) out.push_back(p);
  return out;
}

bool has_root_with_producers(const SketchBuild& b, int* root) {
  const ScheduleState& st = b.base.state;
  for (int s = static_cast<int>(st.stages.size()) - 1; s >= 0; --s) {
    const ir::Stage& ts = st.te.stages[static_cast<size_t>(s)];
    if (b.claimed[static_cast<size_t>(s)] ||
        st.stages[static_cast<size_t>(s)].attach != Attach::Root || !ir::is_pointwise(ts))
      continue;
    const std::vector<int> reductions = reductions_of(st, attachable_producers(st, s));
    if (reductions.empty()) continue;
    // Some axis must be split or of extent 1, so that there is a loop to compute them in.
    const std::set<size_t> indexed = axes_indexing_any(st, ts, reductions);
    for (size_t a = 0; a < ts.axes.size(); ++a)
      if (ts.axes[a].extent <= 1 || indexed.count(a)) {
        *root = s;
        return true;
      }
  }
  return false;
}

// The unroll space's default for a register tile: as many vectors as the accumulators of
// the -O0 policy, about.
constexpr int64_t kDefaultUnroll = 16;

// Does the -O0 policy keep an attached reduction's loops as they are (reductions innermost),
// its innermost spatial extent being too narrow to vectorise? Known once it is attached.
bool narrow_tile(const SketchRun& r, int a, size_t n_spatial, int lanes) {
  if (n_spatial == 0) return true;
  return r.state.stages[static_cast<size_t>(a)].iters[n_spatial - 1].extent <
         std::max(2, lanes / 2);
}

// A default that depends on whether the tile is narrow.
Fallback unless_narrow(int a, size_t n_spatial, int lanes, const Fallback& wide,
                       const Fallback& narrow) {
  return [=](const SketchRun& r, const std::vector<int64_t>& valid) {
    return narrow_tile(r, a, n_spatial, lanes) ? narrow(r, valid) : wide(r, valid);
  };
}

// The tiles among `tiles` (of an axis of `extent`, vectorised) of at least a vector, or of
// the whole extent where it is shorter; `tiles` itself where none is. A narrower register
// tile leaves lanes idle in every instruction of the product: a tile of 4 of 16 lanes ran a
// product with a GELU epilogue at 16 GFLOP/s against 200.
std::vector<int64_t> whole_vectors(const std::vector<int64_t>& tiles, int64_t extent,
                                   int64_t lanes) {
  std::vector<int64_t> whole;
  for (int64_t t : tiles)
    if (t >= std::min(lanes, extent)) whole.push_back(t);
  return whole.empty() ? tiles : whole;
}

// The value a space of a tensorized stage lists (its only one): the tile level of 1, no
// vectors, no unrolling, the operand's layout as the model has it.
int64_t tensorized_value(SpaceKind k) { return k == SpaceKind::Tile ? 1 : 0; }

// Steps [first, end) of `b`, which schedule stage `a`, do nothing where it is tensorized.
void unless_tensorized(SketchBuild& b, size_t first, int a) {
  const auto tensorized = [a](const SketchRun& r) {
    return r.state.stages[static_cast<size_t>(a)].tensorized;
  };
  for (size_t i = first; i < b.steps.size(); ++i) {
    SketchStep& step = b.steps[i];
    auto emit = std::move(step.emit);
    step.emit = [tensorized, emit](SketchRun& r, int64_t v) {
      if (!tensorized(r)) emit(r, v);
    };
    if (!step.space) continue;
    auto candidates = std::move(step.candidates);
    const int64_t only = tensorized_value(step.space->kind);
    step.candidates = [tensorized, candidates, only](const SketchRun& r) {
      return tensorized(r) ? std::vector<int64_t>{only} : candidates(r);
    };
  }
}

// The steps of one attached reduction's own loops.
void tile_producer(SketchBuild& b, int a) {
  const ir::Stage& ta = b.base.state.te.stages[static_cast<size_t>(a)];
  // First, on a CPU with a bf16 unit: whether it computes a bfloat16 product's block whole
  // (AMX tiles, else vdpbf16ps, where the block allows: scheduler/tile_product.h); if so,
  // the stage's other spaces each list one value. -O0: by the unit where it can.
  if (b.target.bf16 != ir::Bf16Unit::None && tile_product_possible(b.base.state, a))
    b.add_space(
        Space{SpaceKind::Tensorize, b.role(a), "-"},
        [](const SketchRun&) {
          return std::vector<int64_t>{0, 1};
        },
        [a](SketchRun& r, int64_t v) {
          if (v == 1) r.emit(Decision{DecisionKind::Tensorize, a, -1, {0}});
        },
        largest());
  const size_t own_loops = b.steps.size();  // the steps that tensorize leaves with one value
  const std::string role = b.role(a);
  const int lanes =
      b.target.vector_lanes(ir::compute_size(b.base.state.te.tensor(ta.output).dtype));
  const size_t n_spatial = ta.axes.size(), n_reduce = ta.reduce_axes.size();
  // Spatial axes: the region's extent splits into (middle, inner); known once attached.
  // The inner tiles form the register tile: at most kMaxTileVectors vectors along the
  // innermost axis, and no more vectors in all than the target has vector registers.
  const int64_t registers = b.target.vector_registers();
  std::vector<size_t> earlier;  // the spaces of the inner tiles before this one
  for (size_t j = 0; j < n_spatial; ++j) {
    const bool innermost = j + 1 == n_spatial;
    const size_t index = b.add_space(
        Space{SpaceKind::Tile, role, ta.axes[j].name + ".1"},
        [a, j, n_spatial, innermost, lanes, registers, earlier](const SketchRun& r) {
          int64_t rows = 1;
          for (size_t e : earlier) rows *= r.values[e];
          const std::vector<Iter>& iters = r.state.stages[static_cast<size_t>(a)].iters;
          const int64_t extent = iters[j].extent;
          // Rows leave room for the vectors the innermost axis will need: it takes whole
          // vectors where it can (whole_vectors).
          int64_t reserved = 1;
          if (!innermost) {
            const int64_t last = iters[n_spatial - 1].extent;
            const int64_t narrowest =
                whole_vectors(divisors(last, kMaxTileVectors * lanes), last, lanes).front();
            reserved = (narrowest + lanes - 1) / lanes;
          }
          std::vector<int64_t> out;
          for (int64_t d : divisors(extent, innermost ? kMaxTileVectors * lanes : registers)) {
            const int64_t vectors = innermost ? (d + lanes - 1) / lanes : d * reserved;
            if (d == 1 || rows * vectors <= registers) out.push_back(d);
          }
          return innermost ? whole_vectors(out, extent, lanes) : out;
        },
        [a, j](SketchRun& r, int64_t inner) {
          const Iter it = r.state.stages[static_cast<size_t>(a)].iters[j];
          if (it.extent > 1)
            r.emit(Decision{DecisionKind::Split, a, -1, {r.position(a, it.name), inner}});
        },
        // -O0: the whole region in the register tile, unless it is too narrow to vectorise
        unless_narrow(a, n_spatial, lanes, largest(), smallest()));
    earlier.push_back(index);
  }
  for (size_t k = 0; k < n_reduce; ++k) {
    const int64_t extent = ta.reduce_axes[k].extent;
    b.add_space(
        Space{SpaceKind::Tile, role, ta.reduce_axes[k].name + ".1"},
        [extent](const SketchRun&) { return divisors(extent, extent); },
        [a, k, n_spatial](SketchRun& r, int64_t inner) {
          const Iter it = r.state.stages[static_cast<size_t>(a)].iters[n_spatial + k];
          if (it.extent > 1)
            r.emit(Decision{DecisionKind::Split, a, -1, {r.position(a, it.name), inner}});
        },
        // -O0: the reduction outside the register tile, inside it when that is narrow
        unless_narrow(a, n_spatial, lanes, smallest(), largest()));
  }
  // unit spatial loops, reduction outer, spatial middle, reduction inner, spatial inner
  b.add_fixed([a, n_spatial, n_reduce](SketchRun& r) {
    const StageState& s = r.state.stages[static_cast<size_t>(a)];
    std::vector<std::string> unit, r0, s2, r1, s3;
    for (size_t j = 0; j < n_spatial + n_reduce; ++j) {
      const Iter& it = s.iters[j];
      const bool reduce = j >= n_spatial;
      if (it.extent <= 1) {
        (reduce ? r0 : unit).push_back(it.name);
        continue;
      }
      (reduce ? r0 : s2).push_back(it.name + ".0");
      (reduce ? r1 : s3).push_back(it.name + ".1");
    }
    std::vector<std::string> order = unit;
    for (auto* g : {&r0, &s2, &r1, &s3}) order.insert(order.end(), g->begin(), g->end());
    r.emit(Decision{DecisionKind::Reorder, a, -1, positions(r, a, order)});
  });
  add_vectorize_space(b, a, unless_narrow(a, n_spatial, lanes, largest(), smallest()));
  add_unroll_space(b, a, unless_narrow(a, n_spatial, lanes, at_most(kDefaultUnroll), smallest()));
  if (!ir::is_pointwise(ta)) add_layout_spaces(b, a, largest());
  unless_tensorized(b, own_loops, a);
}

class TileWithProducersRule : public SketchRule {
 public:
  std::string_view name() const override { return "tile_fused"; }
  bool applies(const SketchBuild& b) const override {
    int root;
    return has_root_with_producers(b, &root);
  }
  void apply(SketchBuild& b) const override {
    int root;
    while (has_root_with_producers(b, &root)) tile(b, root);
  }

 private:
  static void tile(SketchBuild& b, int root) {
    const ScheduleState& st = b.base.state;
    const ir::Stage ts = st.te.stages[static_cast<size_t>(root)];
    const std::vector<int> producers = attachable_producers(st, root);
    // The reductions decide the tiles; a stage kept for them is computed over whatever
    // region they and the root read of it (a whole row for a row reduction).
    const std::vector<int> reductions = reductions_of(st, producers);
    b.claimed[static_cast<size_t>(root)] = true;
    for (int p : producers) b.claimed[static_cast<size_t>(p)] = true;
    const std::set<size_t> indexed = axes_indexing_any(st, ts, reductions);
    int64_t element_bytes = 1;
    for (int p : producers) {
      const int out = st.te.stages[static_cast<size_t>(p)].output;
      element_bytes = std::max<int64_t>(
          element_bytes, static_cast<int64_t>(ir::dtype_size(st.te.tensor(out).dtype)));
    }
    const std::string role = b.role(root);
    const size_t rank = ts.axes.size();
    const std::vector<std::string> axis = axis_roles(st, ts, reductions);
    std::vector<AxisUse> use(rank);
    for (size_t a = 0; a < rank; ++a)
      use[a] = ts.axes[a].extent <= 1 ? AxisUse::Unit
               : indexed.count(a)     ? AxisUse::Split
                                      : AxisUse::Whole;
    // The -O0 policy's register tile gives the inner tiles' defaults. A product a bf16 unit
    // computes takes blocks of 128 x 128 instead (8 x 8 AMX tiles: on a 2-core Intel Xeon,
    // W1 and a 128 x 768 x 3072 product ran 10-25% faster in them than in 32 x 128 or
    // 64 x 128 blocks, with the reduction in parts of 256; 4 x 64 four times slower).
    std::vector<int64_t> default_tile = register_tile(st, root, reductions, b.target);
    bool unit_block = false;   // the default is a block of the bf16 unit's tiles
    bool window_rows = false;  // whose rows lie within one row of positions
    const auto unit = std::find_if(reductions.begin(), reductions.end(),
                                   [&](int p) { return tile_product_possible(st, p); });
    if (b.target.bf16 != ir::Bf16Unit::None && rank >= 2 && unit != reductions.end()) {
      default_tile[rank - 2] = 128;
      default_tile[rank - 1] = 128;
      unit_block = true;
      // Rows of positions (a 1 x 1 convolution's [n, oh, ow, oc]) that are no whole tiles
      // of 16 take several whole rows that are, where A's rows run on across them: 2 rows
      // of 56 (7 tiles), 4 of 28. Elsewhere (a window, a stride) one row, in tiles of fewer
      // rows (56: 4 of 14).
      const int64_t row = ts.axes[rank - 2].extent;
      window_rows = !tile_product_folds(st, *unit);
      if (rank >= 3 && row > 16 && row % 16 != 0 && row < 128 && !window_rows)
        for (int64_t d = 1; d * row <= 128; ++d)
          if (ts.axes[rank - 3].extent % d == 0 && d * row % 16 == 0) default_tile[rank - 3] = d;
    }
    const int64_t lanes = b.target.vector_lanes(ir::compute_size(st.te.tensor(ts.output).dtype));
    // Inner tiles first: their product bounds the local buffers of the reductions. The
    // innermost loop is vectorised: the last whole axis, else the last split one, whose
    // inner tile is then at least a vector where the extent and the buffer allow (as a
    // reduction's register tile, tile_producer).
    std::map<size_t, size_t> inner_space;  // axis -> index of its inner tile's space
    size_t vector_axis = rank;             // none among the split axes
    if (std::find(use.begin(), use.end(), AxisUse::Whole) == use.end())
      for (size_t a = 0; a < rank; ++a)
        if (use[a] == AxisUse::Split) vector_axis = a;
    for (size_t a = 0; a < rank; ++a) {
      if (use[a] != AxisUse::Split) continue;
      const int64_t extent = ts.axes[a].extent;
      const std::map<size_t, size_t> before = inner_space;
      const bool vectorised = a == vector_axis;
      inner_space[a] = b.add_space(
          Space{SpaceKind::Tile, role, axis[a] + ".2"},
          [extent, before, element_bytes, lanes, vectorised](const SketchRun& r) {
            int64_t tile = 1;
            for (const auto& [axis, space] : before) tile *= r.values[space];
            const std::vector<int64_t> sizes =
                tile_sizes(extent, kMaxLocalBytes / element_bytes / tile, lanes);
            return vectorised ? whole_vectors(sizes, extent, lanes) : sizes;
          },
          [](SketchRun&, int64_t) {},
          // Columns in whole tiles of 16 (a last block shifted back to end at the width);
          // rows in tiles the unit takes (17 positions: 16, 17 being prime); either with
          // little computed twice (97 rows: blocks of 16, not 96).
          unit_block && a + 1 == rank   ? at_most_in_tiles(default_tile[a], 16, extent)
          : unit_block && a + 2 == rank ? at_most_in_row_tiles(default_tile[a], extent)
                                        : at_most(default_tile[a]));
    }
    for (size_t a = 0; a < rank; ++a) {
      if (use[a] != AxisUse::Split) continue;
      const int64_t extent = ts.axes[a].extent;
      const size_t inner = inner_space[a];
      const std::string name = iter_name(st, root, a);
      b.add_space(
          Space{SpaceKind::Tile, role, axis[a] + ".1"},
          [extent, inner](const SketchRun& r) {
            const int64_t most = extent / r.values[inner];
            return tile_sizes(most, most, 1);
          },
          [root, inner, name](SketchRun& r, int64_t middle) {
            r.emit(Decision{
                DecisionKind::Split, root, -1, {r.position(root, name), middle, r.values[inner]}});
          },
          smallest());
    }
    // outer loops (unit axes, then the outer level), middle level, inner tile
    std::vector<std::string> outer, middle, inner;
    for (size_t a = 0; a < rank; ++a) {
      const std::string name = iter_name(st, root, a);
      if (use[a] == AxisUse::Unit) outer.push_back(name);
    }
    for (size_t a = 0; a < rank; ++a) {
      const std::string name = iter_name(st, root, a);
      if (use[a] == AxisUse::Split) {
        outer.push_back(name + ".0");
        middle.push_back(name + ".1");
        inner.push_back(name + ".2");
      } else if (use[a] == AxisUse::Whole) {
        inner.push_back(name);
      }
    }
    const bool has_outer = !outer.empty();
    std::vector<std::string> rest = middle;
    rest.insert(rest.end(), inner.begin(), inner.end());
    std::vector<bool> split(rank);
    for (size_t a = 0; a < rank; ++a) split[a] = use[a] == AxisUse::Split;
    const int lead = lead_axis(st, ts, reductions, split);
    int64_t preferred = 1;
    if (lead >= 0)
      preferred = 1 +
                  std::find(outer.begin(), outer.end(),
                            iter_name(st, root, static_cast<size_t>(lead)) + ".0") -
                  outer.begin();
    add_outer_parallel_steps(b, root, outer, rest, preferred);
    // Readers first: a reduction attaches once every stage reading it is in place. Where a
    // stage is kept for the reductions, 1 leaves a producer at the root, computed whole
    // before the root: the kept stage may fit no tile (its rows span whole axes: a Softmax
    // row of 40,000), and a producer may not be computed inside a loop its reader runs
    // outside of, so without it a point could reach a producer with no valid place. Other
    // groups (a product or convolution and its epilogue) never need it and do not list it:
    // a value the language model never saw there is one it may pick blindly.
    const int64_t levels = static_cast<int64_t>(middle.empty() ? 1 : 2);
    const std::string last_middle = middle.empty() ? "" : middle.back();
    const bool keeps = reductions.size() != producers.size();
    for (auto p = producers.rbegin(); p != producers.rend(); ++p) {
      const int producer = *p;
      b.add_space(
          Space{SpaceKind::ComputeAt, b.role(producer), "-"},
          [has_outer, levels, keeps](const SketchRun&) {
            std::vector<int64_t> at;
            if (keeps) at.push_back(1);
            if (has_outer) at.push_back(2);
            if (levels == 2) at.push_back(3);
            return at;
          },
          [producer, root, last_middle](SketchRun& r, int64_t v) {
            if (v == 1) return;
            const int64_t pos = v == 2 ? 0 : r.position(root, last_middle);
            r.emit(Decision{DecisionKind::ComputeAt, producer, root, {pos}});
          },
          // -O0: per outer tile, else per middle tile, else at the root
          [](const SketchRun&, const std::vector<int64_t>& valid) {
            for (int64_t v : valid)
              if (v >= 2) return v;
            return valid.front();
          });
    }
    for (int p : producers) tile_producer(b, p);
    add_vectorize_space(b, root, largest());
    add_unroll_space(b, root, smallest());
  }
};

}  // namespace

std::unique_ptr<SketchRule> make_tile_with_producers_rule() {
  return std::make_unique<TileWithProducersRule>();
}

}  // namespace tlmc::scheduler
