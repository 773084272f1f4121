// A CUDA target's schedule for a stage that no other rule claimed: its spatial loops fused
// into one, split into blocks of threads, one thread an element of the output, each
// computing its reduction (if any) alone. The threads per block are the space; a tile that
// leaves a remainder shifts the last block back, as on the CPU, where the stage has no
// reduction, and divides the elements otherwise.
#include "scheduler/sketch_rules.h"
#include "scheduler/sketch_steps.h"

namespace tlmc::scheduler {
namespace {

// -O0: threads per block, at most (enough warps to hide latency, few enough registers).
constexpr int64_t kDefaultThreads = 256;

void bind_flat(SketchBuild& b, int stage) {
  b.claimed[static_cast<size_t>(stage)] = true;
  const ScheduleState& st = b.base.state;
  const ir::Stage ts = st.te.stages[static_cast<size_t>(stage)];
  const StageState& ss = st.stages[static_cast<size_t>(stage)];
  const size_t spatial = ts.axes.size();
  int64_t elements = 1;
  for (size_t a = 0; a < spatial; ++a) elements *= ss.iters[a].extent;
  // A stage of no axis (a reduction to one value) has no loop to bind: its kernel runs as
  // one thread of one block.
  if (spatial == 0) {
    add_unroll_space(b, stage, smallest());
    return;
  }
  // One spatial loop: fused when there are several.
  if (spatial > 1)
    b.add_fixed([stage, spatial](SketchRun& r) {
      r.emit(Decision{DecisionKind::Fuse, stage, -1, {0, static_cast<int64_t>(spatial)}});
    });
  const bool pointwise = ir::is_pointwise(ts);
  const int64_t most = std::min<int64_t>(b.target.gpu.threads_per_block, 1024);
  const int64_t warp = b.target.gpu.warp;
  b.add_space(
      Space{SpaceKind::Tile, b.role(stage), "threads"},
      [elements, pointwise, most, warp](const SketchRun&) {
        std::vector<int64_t> out;
        for (int64_t t : pointwise ? tile_sizes(elements, most, warp) : divisors(elements, most))
          if ((elements + t - 1) / t <= INT32_MAX) out.push_back(t);
        return out;
      },
      [stage](SketchRun& r, int64_t t) {
        r.emit(Decision{DecisionKind::Split, stage, -1, {0, t}});
        r.emit(Decision{DecisionKind::Bind, stage, -1, {0, 0}});
        r.emit(Decision{DecisionKind::Bind, stage, -1, {1, 1}});
      },
      at_most(kDefaultThreads));
  if (!pointwise) add_unroll_space(b, stage, smallest());
}

class GpuThreadPerElementRule : public SketchRule {
 public:
  std::string_view name() const override { return "thread_per_element"; }
  bool applies(const SketchBuild& b) const override { return !b.unclaimed_roots().empty(); }
  void apply(SketchBuild& b) const override {
    for (int s : b.unclaimed_roots()) bind_flat(b, s);
  }
};

}  // namespace

std::unique_ptr<SketchRule> make_gpu_thread_per_element_rule() {
  return std::make_unique<GpuThreadPerElementRule>();
}

}  // namespace tlmc::scheduler
