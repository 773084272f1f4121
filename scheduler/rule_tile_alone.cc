// Tiling of a stage with nothing computed inside it (element-wise and injective stages, a
// reduction no consumer can compute per tile): each axis splits into an outer loop and an
// inner tile; outer loops fused and run in parallel, then any reduction loops, then the
// tile, whose innermost loop is vectorised and unrolled.
#include "scheduler/sketch_analysis.h"
#include "scheduler/sketch_rules.h"
#include "scheduler/sketch_steps.h"

namespace tlmc::scheduler {
namespace {

// The -O0 policy's tile of the innermost axis, at most.
constexpr int64_t kDefaultInnerTile = 256;

void tile(SketchBuild& b, int stage) {
  b.claimed[static_cast<size_t>(stage)] = true;
  const ScheduleState& st = b.base.state;
  const ir::Stage ts = st.te.stages[static_cast<size_t>(stage)];
  const StageState& ss = st.stages[static_cast<size_t>(stage)];
  const std::string role = b.role(stage);
  const int64_t lanes = b.target.vector_lanes(ir::compute_size(st.te.tensor(ts.output).dtype));
  std::vector<std::string> outer, reduce, inner;
  // -O0 for a transpose: the axis an operand is read along, and the innermost, in tiles of
  // a cache line of elements, so that the lines a tile reads stay in the L1 cache until
  // each has served the whole tile. Rows of the input a large power of two apart map to a
  // few cache sets: 128 of them thrash a 32 KiB 8-way cache where 16 fit (BERT-base's
  // [128,12,64] -> [12,64,128]: 78 -> 17 us; MobileNetV2's input [3,224,224] -> [224,224,3]:
  // 69 -> 22 us; 2-core Zen 4).
  const std::set<size_t> across = ir::is_pointwise(ts) ? axes_read_across(ts) : std::set<size_t>{};
  const int64_t line = std::max<int64_t>(
      1, 64 / static_cast<int64_t>(ir::dtype_size(st.te.tensor(ts.output).dtype)));
  for (size_t a = 0; a < ts.axes.size(); ++a) {
    const Iter& it = ss.iters[a];
    if (it.extent <= 1) {
      outer.push_back(it.name);
      continue;
    }
    outer.push_back(it.name + ".0");
    inner.push_back(it.name + ".1");
    const std::string name = it.name;
    const int64_t extent = it.extent;
    // A reduction's tiles divide their loops: it accumulates in place, so a tile computed
    // twice would add twice.
    const bool pointwise = ir::is_pointwise(ts);
    b.add_space(
        Space{SpaceKind::Tile, role, ts.axes[a].name + ".1"},
        [extent, pointwise, lanes](const SketchRun&) {
          return pointwise ? tile_sizes(extent, extent, lanes) : divisors(extent, extent);
        },
        [stage, name](SketchRun& r, int64_t t) {
          r.emit(Decision{DecisionKind::Split, stage, -1, {r.position(stage, name), t}});
        },
        // -O0: the innermost axis in tiles of up to 256, the others outside
        across.count(a) || (a + 1 == ts.axes.size() && !across.empty())
            ? at_most(tile_at_most(extent, line))
        : a + 1 == ts.axes.size()
            ? at_most(pointwise ? tile_at_most(extent, kDefaultInnerTile) : kDefaultInnerTile)
            : smallest());
  }
  for (size_t k = 0; k < ts.reduce_axes.size(); ++k)
    reduce.push_back(ss.iters[ts.axes.size() + k].name);
  reduce.insert(reduce.end(), inner.begin(), inner.end());
  add_outer_parallel_steps(b, stage, outer, reduce);
  add_vectorize_space(b, stage, largest());
  add_unroll_space(b, stage, smallest());
  if (!ir::is_pointwise(ts)) add_layout_spaces(b, stage, largest());
}

class TileAloneRule : public SketchRule {
 public:
  std::string_view name() const override { return "tile"; }
  bool applies(const SketchBuild& b) const override { return !b.unclaimed_roots().empty(); }
  void apply(SketchBuild& b) const override {
    for (int s : b.unclaimed_roots()) tile(b, s);
  }
};

}  // namespace

std::unique_ptr<SketchRule> make_tile_alone_rule() { return std::make_unique<TileAloneRule>(); }

}  // namespace tlmc::scheduler
