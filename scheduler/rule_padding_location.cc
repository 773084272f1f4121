// Where a padding stage read by a reduction is computed: at the root (the whole padded
// tensor in scratch memory), inlined (a bounds test at every tap of the window), or inside
// the tile loop of the stage its reduction is computed in (just the window the tile reads);
// at the root alone where the bf16 unit computes the reduction (scheduler/tile_product.h).
// Then its own loops: fused and parallel at the root, innermost vectorised and unrolled.
#include <algorithm>

#include "scheduler/sketch_analysis.h"
#include "scheduler/sketch_rules.h"
#include "scheduler/sketch_steps.h"

namespace tlmc::scheduler {
namespace {

// Is padding stage `pad` read only by reductions over a window's taps alone (a pooling, a
// depthwise convolution: at most 32 terms per output), either a pooling (the tap's value
// alone) or strided (the padded tensor at least twice the output), and is its innermost
// dimension, along which loads are vectorised, not padded (the channels of a channels-last
// or blocked tensor)? Inlined there, the padding costs one bounds test per tap for a whole
// vector, less than a pass that writes the padded copy and one that reads it back: a 3x3/2
// max pooling of 64 channels at 112x112 ran in half the time, a 3x3/2 depthwise
// convolution of 96 channels at 112x112 in 0.55 of it. At stride 1 a depthwise convolution
// reads each padded element nine times and ran 1.4 times slower inlined. Padded along the
// innermost dimension, each lane would be tested apart (a 3x3/1 average pooling ran 6 times
// slower inlined); a dense convolution's taps run over the input channels too, and each
// padded element is read by many of them.
bool inlined_into_window_reduction(const ScheduleState& st, int pad) {
  const ir::Stage& ps = st.te.stages[static_cast<size_t>(pad)];
  if (ps.axes.empty() || ps.body->kind != ir::ExprKind::Select ||
      ir::uses_var(ps.body->args[0], ps.axes.back().var_id))
    return false;
  auto elements = [](const std::vector<ir::Axis>& axes) {
    int64_t n = 1;
    for (const ir::Axis& a : axes) n *= a.extent;
    return n;
  };
  const std::vector<int> readers = st.consumers(ps.output);
  return !readers.empty() && std::all_of(readers.begin(), readers.end(), [&](int r) {
    const ir::Stage& s = st.te.stages[static_cast<size_t>(r)];
    if (s.reduce == ir::ReduceKind::None || elements(s.reduce_axes) > 32) return false;
    const bool pooling = s.body->kind == ir::ExprKind::Load && s.body->var_id == ps.output;
    return pooling || elements(ps.axes) >= 2 * elements(s.axes);
  });
}

std::vector<int> unclaimed_paddings(const SketchBuild& b) {
  std::vector<int> out;
  for (size_t s = 0; s < b.base.state.stages.size(); ++s)
    if (!b.claimed[s] && b.base.state.stages[s].attach == Attach::Root &&
        is_padding_of_reduction(b.base.state, static_cast<int>(s)))
      out.push_back(static_cast<int>(s));
  return out;
}

class PaddingLocationRule : public SketchRule {
 public:
  std::string_view name() const override { return "pad_at"; }
  bool applies(const SketchBuild& b) const override { return !unclaimed_paddings(b).empty(); }
  void apply(SketchBuild& b) const override {
    for (int pad : unclaimed_paddings(b)) {
      b.claimed[static_cast<size_t>(pad)] = true;
      const int tensor = b.base.state.te.stages[static_cast<size_t>(pad)].output;
      const size_t rank = b.base.state.te.stages[static_cast<size_t>(pad)].axes.size();
      b.add_space(
          Space{SpaceKind::ComputeAt, b.role(pad), "-"},
          // At the root alone where the bf16 unit computes its reader: the unit reads the
          // padded tensor whole, a window's taps as offsets of it.
          [tensor](const SketchRun& r) {
            for (int reader : r.state.consumers(tensor))
              if (r.state.stages[static_cast<size_t>(reader)].tensorized)
                return std::vector<int64_t>{0};
            return std::vector<int64_t>{0, 1, 2};
          },
          [pad, tensor](SketchRun& r, int64_t v) {
            if (v == 1) r.emit(Decision{DecisionKind::Inline, pad, -1, {}});
            if (v != 2) return;
            // Beside its reader, inside the loop that reader is computed in.
            const std::vector<int> readers = r.state.consumers(tensor);
            if (readers.empty()) throw InvalidDecision("the padding has no reader");
            const StageState& reader = r.state.stages[static_cast<size_t>(readers[0])];
            if (reader.attach != Attach::At)
              throw InvalidDecision("the padding's reader is computed at the root");
            const StageState& host = r.state.stages[static_cast<size_t>(reader.at_stage)];
            int64_t pos = -1;
            for (size_t i = 0; i < host.leaves.size(); ++i)
              if (host.leaves[i] == reader.at_iter) pos = static_cast<int64_t>(i);
            r.emit(Decision{DecisionKind::ComputeAt, pad, reader.at_stage, {pos}});
          },
          inlined_into_window_reduction(b.base.state, pad) ? at_most(1) : smallest());
      b.add_space(
          Space{SpaceKind::Parallel, b.role(pad), "-"},
          [rank](const SketchRun&) {
            return rank >= 2 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{0};
          },
          [pad, rank](SketchRun& r, int64_t v) {
            if (!v) return;
            if (rank > 2)
              r.emit(Decision{DecisionKind::Fuse, pad, -1, {0, static_cast<int64_t>(rank) - 1}});
            r.emit(Decision{DecisionKind::Parallel, pad, -1, {0}});
          },
          largest());
      add_vectorize_space(b, pad, largest());
      add_unroll_space(b, pad, smallest());
    }
  }
};

}  // namespace

std::unique_ptr<SketchRule> make_padding_location_rule() {
  return std::make_unique<PaddingLocationRule>();
}

}  // namespace tlmc::scheduler
