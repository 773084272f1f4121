// CUDA: a reduction that the multi-level tiling rule computes per thread reads the operands
// its output elements share (a product's rows, a convolution's weights) through copies in
// the block's shared memory, one CacheRead each; that rule places and fills them.
#include "scheduler/sketch_analysis.h"
#include "scheduler/sketch_rules.h"

namespace tlmc::scheduler {
namespace {

// Tiled reductions no earlier rule claimed (a product of few rows may have been: it reads
// its operands without copies), some of whose shared operands have no copy yet.
std::vector<int> uncached(const SketchBuild& b) {
  const ScheduleState& st = b.base.state;
  std::vector<int> out;
  for (size_t s = 0; s < st.stages.size(); ++s) {
    if (b.claimed[s] || !is_gpu_tiled_reduction(st, static_cast<int>(s))) continue;
    const ir::Stage& ts = st.te.stages[s];
    const std::vector<int> operands = ir::stage_operands(ts);
    for (size_t k : shared_operands(ts)) {
      const int producer = st.te.tensor(operands[k]).stage;
      if (producer < 0 || !st.stages[static_cast<size_t>(producer)].shared) {
        out.push_back(static_cast<int>(s));
        break;
      }
    }
  }
  return out;
}

class GpuSharedCacheReadRule : public SketchRule {
 public:
  std::string_view name() const override { return "shared_cache_read"; }
  bool applies(const SketchBuild& b) const override { return !uncached(b).empty(); }
  void apply(SketchBuild& b) const override {
    // Each copy is a new stage before its reader: the reader's index moves by one, and the
    // stages found after it by one each.
    std::vector<int> readers = uncached(b);
    int shift = 0;
    for (int r : readers) {
      int reader = r + shift;
      const std::vector<size_t> operands =
          shared_operands(b.base.state.te.stages[static_cast<size_t>(reader)]);
      for (size_t k : operands) {
        b.base.emit(Decision{DecisionKind::CacheRead, reader, -1, {static_cast<int64_t>(k)}});
        b.claimed.insert(b.claimed.begin() + reader, false);  // the copy, unclaimed
        ++reader;
        ++shift;
      }
    }
  }
};

}  // namespace

std::unique_ptr<SketchRule> make_gpu_shared_cache_read_rule() {
  return std::make_unique<GpuSharedCacheReadRule>();
}

}  // namespace tlmc::scheduler
