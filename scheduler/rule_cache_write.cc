// Cache write: a reduction that writes a subgraph output is computed into a local stage
// ("<name>.local") and copied out, so that the copy's tiles (run in parallel) compute it.
#include "scheduler/sketch_analysis.h"
#include "scheduler/sketch_rules.h"

namespace tlmc::scheduler {
namespace {

// On a GPU only a reduction with operands to share is tiled (and cached): another is
// computed one thread an output element, in place.
bool needs_cache(const ScheduleState& st, size_t s, const ir::Target& target) {
  const ir::Stage& ts = st.te.stages[s];
  return st.te.is_output(ts.output) && !ir::is_pointwise(ts) &&
         st.stages[s].attach == Attach::Root && (!target.is_cuda() || !shared_operands(ts).empty());
}

class CacheWriteRule : public SketchRule {
 public:
  std::string_view name() const override { return "cache_write"; }
  bool applies(const SketchBuild& b) const override {
    for (size_t s = 0; s < b.base.state.stages.size(); ++s)
      if (needs_cache(b.base.state, s, b.target)) return true;
    return false;
  }
  void apply(SketchBuild& b) const override {
    for (size_t s = 0; s < b.base.state.stages.size(); ++s)
      if (needs_cache(b.base.state, s, b.target)) {
        b.base.emit(Decision{DecisionKind::CacheWrite, static_cast<int>(s), -1, {}});
        ++s;  // past the copy stage now at s + 1
      }
  }
};

}  // namespace

std::unique_ptr<SketchRule> make_cache_write_rule() { return std::make_unique<CacheWriteRule>(); }

}  // namespace tlmc::scheduler
