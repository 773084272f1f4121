#include "scheduler/sketch_steps.h"

#include <algorithm>

namespace tlmc::scheduler {
namespace {

// The longest loop the code generator writes out copy by copy (codegen/emit_kernel.cc).
constexpr int64_t kLongestUnrolled = 32;
// Vectors in a tile that tile_sizes offers as a multiple of the lanes, at most.
constexpr int64_t kMaxLaneMultiple = 8;

}  // namespace

std::vector<int64_t> divisors(int64_t n, int64_t cap) {
  if (n < 1) return {1};  // an empty axis: left whole
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n && d <= cap && d <= kLargestSpaceValue; ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

std::vector<int64_t> tile_sizes(int64_t n, int64_t cap, int64_t lanes) {
  std::vector<int64_t> out = divisors(n, cap);
  const int64_t most = std::min({n, cap, kLargestSpaceValue});
  for (int64_t p = 2; p <= most; p *= 2) out.push_back(p);
  for (int64_t m = 1; lanes > 1 && m <= kMaxLaneMultiple && m * lanes <= most; ++m)
    out.push_back(m * lanes);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const std::vector<int64_t>& unroll_steps() {
  static const std::vector<int64_t> steps = {0, 16, 64, 512};
  return steps;
}

void add_outer_parallel_steps(SketchBuild& b, int stage, std::vector<std::string> outer,
                              std::vector<std::string> rest, int64_t preferred) {
  auto values_of = [stage, outer](const SketchRun& r) {
    if (outer.empty()) return std::vector<int64_t>{0};
    // Leading with outer[k] differs from the declared order only when k has more than
    // one iteration and so does some loop declared before it.
    std::vector<int64_t> values = {0, 1};
    bool longer_before = false;
    for (size_t k = 0; k < outer.size(); ++k) {
      const bool longer =
          r.state.leaf(stage, static_cast<size_t>(r.position(stage, outer[k]))).extent > 1;
      if (longer && longer_before) values.push_back(static_cast<int64_t>(k) + 1);
      longer_before = longer_before || longer;
    }
    return values;
  };
  auto emit = [stage, outer = std::move(outer), rest = std::move(rest)](SketchRun& r, int64_t v) {
    std::vector<std::string> names = outer;
    if (v > 1) std::rotate(names.begin(), names.begin() + (v - 1), names.begin() + v);
    names.insert(names.end(), rest.begin(), rest.end());
    std::vector<int64_t> order;
    for (const std::string& n : names) order.push_back(r.position(stage, n));
    r.emit(Decision{DecisionKind::Reorder, stage, -1, order});
    if (outer.size() >= 2)
      r.emit(Decision{DecisionKind::Fuse, stage, -1, {0, static_cast<int64_t>(outer.size())}});
    if (v) r.emit(Decision{DecisionKind::Parallel, stage, -1, {0}});
  };
  b.add_space(
      Space{SpaceKind::Parallel, b.role(stage), "-"}, std::move(values_of), std::move(emit),
      [preferred](const SketchRun& r, const std::vector<int64_t>& valid) {
        if (std::count(valid.begin(), valid.end(), preferred)) return preferred;
        return at_most(1)(r, valid);
      },
      // A leader no longer listed has one iteration, or only such loops before it.
      [](int64_t v) { return std::min<int64_t>(v, 1); });
}

void add_vectorize_space(SketchBuild& b, int stage, Fallback fallback) {
  b.add_space(
      Space{SpaceKind::Vectorize, b.role(stage), "-"},
      [](const SketchRun&) {
        return std::vector<int64_t>{0, 1};
      },
      [stage](SketchRun& r, int64_t v) {
        if (v == 0) return;
        const size_t n = r.state.stages[static_cast<size_t>(stage)].leaves.size();
        r.emit(Decision{DecisionKind::Vectorize, stage, -1, {static_cast<int64_t>(n) - 1}});
      },
      std::move(fallback));
}

void add_unroll_space(SketchBuild& b, int stage, Fallback fallback) {
  const int lanes = b.target.vector_lanes(ir::compute_size(
      b.base.state.te.tensor(b.base.state.te.stages[static_cast<size_t>(stage)].output).dtype));
  b.add_space(
      Space{SpaceKind::Unroll, b.role(stage), "-"}, [](const SketchRun&) { return unroll_steps(); },
      [stage, lanes](SketchRun& r, int64_t max_step) {
        int64_t product = 1;
        for (size_t i = r.state.stages[static_cast<size_t>(stage)].leaves.size(); i-- > 0;) {
          const Iter it = r.state.leaf(stage, i);  // a copy: emit() replaces the state
          if (it.kind == ir::LoopKind::Vectorized) {
            product *= (it.extent + lanes - 1) / lanes;
            continue;
          }
          if (it.reduce || it.kind != ir::LoopKind::Serial || it.extent > kLongestUnrolled ||
              product * it.extent > max_step)
            return;
          if (it.extent > 1)
            r.emit(Decision{DecisionKind::Unroll, stage, -1, {static_cast<int64_t>(i)}});
          product *= it.extent;
        }
      },
      std::move(fallback));
}

void add_layout_spaces(SketchBuild& b, int stage, const Fallback& fallback) {
  const ScheduleState& st = b.base.state;
  const std::vector<int> operands = ir::stage_operands(st.te.stages[static_cast<size_t>(stage)]);
  for (size_t k = 0; k < operands.size(); ++k) {
    const ir::TeTensor& t = st.te.tensor(operands[k]);
    if (t.stage >= 0 || !t.constant || st.consumers(operands[k]) != std::vector<int>{stage})
      continue;
    b.add_space(
        Space{SpaceKind::Layout, b.role(stage), "in" + std::to_string(k)},
        [](const SketchRun&) {
          return std::vector<int64_t>{0, 1};
        },
        [stage, k](SketchRun& r, int64_t v) {
          if (v == 1) r.emit(Decision{DecisionKind::Pack, stage, -1, {static_cast<int64_t>(k)}});
        },
        fallback);
  }
}

}  // namespace tlmc::scheduler
