// Always-inline: pointwise stages that are not outputs are substituted into their readers,
// except, on a CPU, a padding stage read by a reduction (its location is a space of its
// own) and a stage kept for a reduction (is_kept_for_a_reduction: computed once per tile).
#include "scheduler/sketch_analysis.h"
#include "scheduler/sketch_rules.h"

namespace tlmc::scheduler {
namespace {

class InlineRule : public SketchRule {
 public:
  std::string_view name() const override { return "inline"; }
  bool applies(const SketchBuild& b) const override { return !inlinable(b).empty(); }
  void apply(SketchBuild& b) const override {
    for (int s : inlinable(b)) b.base.emit(Decision{DecisionKind::Inline, s, -1, {}});
  }

 private:
  static std::vector<int> inlinable(const SketchBuild& b) {
    std::vector<int> out;
    const ScheduleState& st = b.base.state;
    for (size_t s = 0; s < st.te.stages.size(); ++s) {
      const ir::Stage& ts = st.te.stages[s];
      if (ir::is_pointwise(ts) && !st.te.is_output(ts.output) &&
          st.stages[s].attach == Attach::Root &&
          (b.target.is_cuda() || (!is_padding_of_reduction(st, static_cast<int>(s)) &&
                                  !is_kept_for_a_reduction(st, static_cast<int>(s)))))
        out.push_back(static_cast<int>(s));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<SketchRule> make_inline_rule() { return std::make_unique<InlineRule>(); }

}  // namespace tlmc::scheduler
