#include "scheduler/sketch_rules.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "scheduler/tile_product.h"

namespace tlmc::scheduler {

Fallback at_most(int64_t want) {
  return [want](const SketchRun&, const std::vector<int64_t>& valid) {
    int64_t best = *std::min_element(valid.begin(), valid.end());
    for (int64_t v : valid)
      if (v <= want && v > best) best = v;
    return best;
  };
}

namespace {

// Of the valid values at most `want` that `fits`, the largest whose blocks cover `extent`
// computing at most an eighth of it twice (the last block shifted back to end at the
// extent), else the one computing the fewest elements (the larger of equals); 0 where
// none fits. 97 rows in blocks of up to 128: 16 (7 blocks, 112 rows computed), not 96
// (2 blocks, 192 rows).
int64_t least_waste(const std::vector<int64_t>& valid, int64_t want, int64_t extent,
                    const std::function<bool(int64_t)>& fits) {
  const auto computed = [extent](int64_t v) { return (extent + v - 1) / v * v; };
  int64_t best = 0, fewest = 0;
  for (int64_t v : valid) {
    if (v > want || !fits(v)) continue;
    if (8 * (computed(v) - extent) <= extent) best = std::max(best, v);
    if (fewest == 0 || computed(v) < computed(fewest) ||
        (computed(v) == computed(fewest) && v > fewest))
      fewest = v;
  }
  return best > 0 ? best : fewest;
}

}  // namespace

Fallback at_most_in_tiles(int64_t want, int64_t tile, int64_t extent) {
  return [want, tile, extent](const SketchRun& r, const std::vector<int64_t>& valid) {
    const int64_t best =
        least_waste(valid, want, extent, [tile](int64_t v) { return v <= tile || v % tile == 0; });
    return best > 0 ? best : at_most(want)(r, valid);
  };
}

Fallback at_most_in_row_tiles(int64_t want, int64_t extent) {
  return [want, extent](const SketchRun& r, const std::vector<int64_t>& valid) {
    const int64_t best = least_waste(valid, want, extent, tile_rows_fit);
    return best > 0 ? best : at_most(want)(r, valid);
  };
}

Fallback largest() {
  return [](const SketchRun&, const std::vector<int64_t>& valid) {
    return *std::max_element(valid.begin(), valid.end());
  };
}

Fallback smallest() {
  return [](const SketchRun&, const std::vector<int64_t>& valid) {
    return *std::min_element(valid.begin(), valid.end());
  };
}

namespace {

// The suffixes lowering and the cache rules give the stages they add ("x.conv", "y.max"):
// only these name a role. Any other text after a dot comes from the model's tensor names
// ("/features.0/Conv_output_0"), which must not reach space names: two subgraphs of one
// workload key would otherwise name their spaces differently.
bool is_lowering_suffix(const std::string& s) {
  static const char* const kSuffixes[] = {"acc", "cache", "cl",    "conv",   "i",     "max", "mm",
                                          "pad", "rf",    "shape", "shared", "sqsum", "sum"};
  for (const char* k : kSuffixes)
    if (s == k) return true;
  return false;
}

}  // namespace

std::string SketchBuild::role(int stage) const {
  // The operator's part the stage computes: the suffix lowering gave its name ("x.conv",
  // "y.max", "s0.pad"), else its operator ("matmul"); the subgraph's outputs are "out"; a
  // cache stage is named for its reduction.
  auto base_role = [&](int s) {
    const ir::Stage& ts = base.state.te.stages[static_cast<size_t>(s)];
    if (base.state.te.is_output(ts.output)) return std::string("out");
    std::string name = ts.name;
    if (name.size() > 6 && name.compare(name.size() - 6, 6, ".local") == 0)
      name.resize(name.size() - 6);
    const size_t dot = name.rfind('.');
    if (dot != std::string::npos && is_lowering_suffix(name.substr(dot + 1)))
      return name.substr(dot + 1);
    if (!ts.op.empty()) return ts.op;
    return std::string(ir::is_pointwise(ts) ? "ew" : "reduce");
  };
  const std::string mine = base_role(stage);
  int same_before = 0;
  for (int s = 0; s < stage; ++s) same_before += base_role(s) == mine;
  return same_before ? mine + std::to_string(same_before + 1) : mine;
}

std::vector<int> SketchBuild::unclaimed_roots() const {
  std::vector<int> out;
  for (size_t s = 0; s < base.state.stages.size(); ++s)
    if (!claimed[s] && base.state.stages[s].attach == Attach::Root)
      out.push_back(static_cast<int>(s));
  return out;
}

void SketchBuild::add_fixed(std::function<void(SketchRun&)> emit) {
  SketchStep step;
  step.emit = [emit = std::move(emit)](SketchRun& r, int64_t) { emit(r); };
  steps.push_back(std::move(step));
}

size_t SketchBuild::add_space(Space space,
                              std::function<std::vector<int64_t>(const SketchRun&)> candidates,
                              std::function<void(SketchRun&, int64_t)> emit, Fallback fallback,
                              std::function<int64_t(int64_t)> equivalent) {
  SketchStep step;
  step.space = std::move(space);
  step.candidates = std::move(candidates);
  step.emit = std::move(emit);
  step.fallback = std::move(fallback);
  step.equivalent = std::move(equivalent);
  steps.push_back(std::move(step));
  return spaces++;
}

std::vector<std::unique_ptr<SketchRule>> cpu_sketch_rules() {
  std::vector<std::unique_ptr<SketchRule>> rules;
  // First, as it adds a stage: a reduction with too little spatial parallelism for the
  // cores and vector lanes is also factored into partial reductions (a fork).
  rules.push_back(make_rfactor_rule());
  // Structural first: inlining decides which stages exist as loops, and a reduction that
  // writes an output gets its cache stage before any rule tiles the stage copying it out.
  rules.push_back(make_inline_rule());
  rules.push_back(make_cache_write_rule());
  // Root stages that compute reductions per tile, after the cache stages (their copy-out
  // stage is such a root); before padding, whose location is among the tile's loops.
  rules.push_back(make_tile_with_producers_rule());
  rules.push_back(make_padding_location_rule());
  // Every stage still at the root and unclaimed: tiled alone, last.
  rules.push_back(make_tile_alone_rule());
  return rules;
}

std::vector<std::unique_ptr<SketchRule>> gpu_sketch_rules() {
  std::vector<std::unique_ptr<SketchRule>> rules;
  // Structural first: every pointwise stage that is not an output is inlined (on a GPU a
  // padding stage too: its reader tests the bounds), so that the stages left are the ones
  // that must exist as loops.
  rules.push_back(make_inline_rule());
  // A reduction that writes an output is computed into a local stage and copied out, so
  // that it can be computed per thread inside the copy's tiles (where it has operands to
  // share: rule_cache_write.cc); then those operands get their shared-memory copies, both
  // structural, before the tiling rule places them.
  rules.push_back(make_cache_write_rule());
  // A product of few rows may instead be shared by threads along its reduction (a fork),
  // before the shared copies, which it does not need.
  rules.push_back(make_gpu_few_row_product_rule());
  rules.push_back(make_gpu_shared_cache_read_rule());
  rules.push_back(make_gpu_multi_level_tiling_rule());
  // Reductions with nothing to share: their threads share each reduction (a fork).
  rules.push_back(make_gpu_cross_thread_reduction_rule());
  // Every stage still at the root and unclaimed: one thread an element.
  rules.push_back(make_gpu_thread_per_element_rule());
  return rules;
}

Sketches generate_sketches(const ir::TeProgram& program, const ir::Target& target) {
  std::vector<SketchBuild> builds = {
      SketchBuild{target, SketchRun{ScheduleState(program), {}, {}}, {}, {}, 0, {}}};
  for (const std::unique_ptr<SketchRule>& rule :
       target.is_cuda() ? gpu_sketch_rules() : cpu_sketch_rules()) {
    std::vector<SketchBuild> next;
    for (SketchBuild& b : builds) {
      b.claimed.resize(b.base.state.stages.size(), false);
      if (!rule->applies(b)) {
        next.push_back(std::move(b));
        continue;
      }
      std::optional<SketchBuild> without;
      const bool with_first = rule->forks() && rule->first(b);
      if (rule->forks()) without.emplace(b);
      if (without && !with_first) next.push_back(*without);
      rule->apply(b);
      b.applied.emplace_back(rule->name());
      next.push_back(std::move(b));
      if (without && with_first) next.push_back(std::move(*without));
    }
    builds = std::move(next);
  }
  Sketches sketches;
  for (SketchBuild& b : builds) {
    std::string name;
    for (const std::string& n : b.applied) name += (name.empty() ? "" : "+") + n;
    Sketch sketch(name.empty() ? "none" : name, std::move(b.base));
    for (SketchStep& s : b.steps) sketch.add(std::move(s));
    sketches.push_back(std::move(sketch));
  }
  return sketches;
}

Sketch generate_sketch(const ir::TeProgram& program, const ir::Target& target) {
  return generate_sketches(program, target).front();
}

}  // namespace tlmc::scheduler
