// Rfactor (a forking rule): a reduction with too little spatial parallelism to fill the
// cores and vector lanes (a full sum, the rows of a softmax or LayerNorm with few rows, a
// Gemm with one row and few columns) is also factored: its largest reduction axis splits
// into f slices reduced in a new stage whose spatial axes include the slice, so the partial
// reductions run in parallel and over vector lanes; the stage then reduces the f partial
// results. The sketch without it is kept too: the search measures which is faster.
#include "scheduler/sketch_rules.h"
#include "scheduler/sketch_steps.h"

namespace tlmc::scheduler {
namespace {

// Partial reductions per output element, at most, in multiples of the parallel lanes.
constexpr int64_t kSlicesPerLane = 4;

struct Factoring {
  int stage;
  int64_t axis;    // among the reduction axes
  int64_t factor;  // slices
};

// The factoring of root reduction `s`, or factor 0 where it has parallelism enough.
Factoring factoring(const SketchBuild& b, size_t s) {
  const ScheduleState& st = b.base.state;
  const ir::Stage& ts = st.te.stages[s];
  const StageState& ss = st.stages[s];
  if (ir::is_pointwise(ts) || ss.attach != Attach::Root || ss.transformed || b.claimed[s])
    return {static_cast<int>(s), 0, 0};
  const int64_t lanes = b.target.vector_lanes(ir::compute_size(st.te.tensor(ts.output).dtype));
  const int64_t parallel_lanes = static_cast<int64_t>(b.target.cores) * lanes;
  int64_t spatial = 1;
  for (const ir::Axis& a : ts.axes) spatial *= a.extent;
  if (spatial >= parallel_lanes) return {static_cast<int>(s), 0, 0};
  size_t widest = 0;
  for (size_t k = 1; k < ts.reduce_axes.size(); ++k)
    if (ts.reduce_axes[k].extent > ts.reduce_axes[widest].extent) widest = k;
  const int64_t extent = ts.reduce_axes.empty() ? 1 : ts.reduce_axes[widest].extent;
  int64_t factor = 0;
  for (int64_t f : divisors(extent, kSlicesPerLane * parallel_lanes))
    if (f >= 2 && f < extent) factor = f;
  return {static_cast<int>(s), static_cast<int64_t>(widest), factor};
}

std::vector<Factoring> factorings(const SketchBuild& b) {
  std::vector<Factoring> out;
  for (size_t s = 0; s < b.base.state.stages.size(); ++s) {
    const Factoring f = factoring(b, s);
    if (f.factor > 0) out.push_back(f);
  }
  return out;
}

class RFactorRule : public SketchRule {
 public:
  std::string_view name() const override { return "rfactor"; }
  bool forks() const override { return true; }
  bool applies(const SketchBuild& b) const override { return !factorings(b).empty(); }
  void apply(SketchBuild& b) const override {
    // From the last: a factored stage gains a stage before it, moving the later ones.
    const std::vector<Factoring> all = factorings(b);
    for (auto f = all.rbegin(); f != all.rend(); ++f)
      b.base.emit(Decision{DecisionKind::RFactor, f->stage, -1, {f->axis, f->factor}});
  }
};

}  // namespace

std::unique_ptr<SketchRule> make_rfactor_rule() { return std::make_unique<RFactorRule>(); }

}  // namespace tlmc::scheduler
