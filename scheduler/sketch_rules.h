// Sketch rules (STYLE.md §5): each derives part of a subgraph's sketch, structural decisions
// (inline, cache stages) or space steps (tiles, compute locations, annotations), behind one
// interface; cpu_sketch_rules() declares their order. generate_sketch runs them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/target.h"
#include "scheduler/sketch.h"

namespace tlmc::scheduler {

using Fallback = std::function<int64_t(const SketchRun&, const std::vector<int64_t>& valid)>;
// Default policies: the largest valid value at most `want` (else the smallest valid one).
Fallback at_most(int64_t want);
// Blocks of a bf16 unit along an axis of `extent`: of the valid values at most `want` that
// are at most `tile` or a multiple of it (whole tiles), the largest whose blocks compute at
// most an eighth of the extent twice (the last block shifted back), else the one computing
// the fewest elements; at_most(want) where none is.
Fallback at_most_in_tiles(int64_t want, int64_t tile, int64_t extent);
// The same for rows: values that make whole tiles of rows of the unit's block
// (scheduler/tile_product.h, tile_rows_fit).
Fallback at_most_in_row_tiles(int64_t want, int64_t extent);
Fallback largest();
Fallback smallest();

// What the rules share while a sketch is built.
struct SketchBuild {
  const ir::Target& target;
  SketchRun base;  // the structural decisions so far; final once a rule adds steps
  std::vector<SketchStep> steps;
  std::vector<std::string> applied;  // names of the rules that applied, in order
  size_t spaces = 0;                 // space steps added so far: the index of the next one
  std::vector<bool> claimed;         // per stage: a rule has given it steps
  // The role name of a stage in spaces (stable across workloads: "conv", "pad", "out").
  std::string role(int stage) const;
  // Stages at the root that no rule has given steps yet, in order.
  std::vector<int> unclaimed_roots() const;
  void add_fixed(std::function<void(SketchRun&)> emit);
  // Adds a space step; returns its index among the sketch's spaces (its value's index in
  // SketchRun::values). `fallback` is the -O0 policy's value, among those valid;
  // `equivalent` as SketchStep's.
  size_t add_space(Space space, std::function<std::vector<int64_t>(const SketchRun&)> candidates,
                   std::function<void(SketchRun&, int64_t)> emit, Fallback fallback,
                   std::function<int64_t(int64_t)> equivalent = nullptr);
};

class SketchRule {
 public:
  virtual ~SketchRule() = default;
  virtual std::string_view name() const = 0;
  virtual bool applies(const SketchBuild& b) const = 0;
  virtual void apply(SketchBuild& b) const = 0;
  // A rule that forks: where it applies, the sketches are built both with and without it.
  virtual bool forks() const { return false; }
  // A forking rule: whether the sketch built with it comes first (and its default point is
  // the -O0 schedule) rather than the one without it. Asked before apply.
  virtual bool first(const SketchBuild&) const { return false; }
};

// The rules, one per file.
std::unique_ptr<SketchRule> make_rfactor_rule();                 // rule_rfactor.cc
std::unique_ptr<SketchRule> make_inline_rule();                  // rule_inline.cc
std::unique_ptr<SketchRule> make_cache_write_rule();             // rule_cache_write.cc
std::unique_ptr<SketchRule> make_tile_with_producers_rule();     // rule_tile_with_producers.cc
std::unique_ptr<SketchRule> make_padding_location_rule();        // rule_padding_location.cc
std::unique_ptr<SketchRule> make_tile_alone_rule();              // rule_tile_alone.cc
std::unique_ptr<SketchRule> make_gpu_shared_cache_read_rule();   // rule_gpu_shared_cache_read.cc
std::unique_ptr<SketchRule> make_gpu_multi_level_tiling_rule();  // rule_gpu_multi_level_tiling.cc
std::unique_ptr<SketchRule> make_gpu_cross_thread_reduction_rule();
std::unique_ptr<SketchRule> make_gpu_few_row_product_rule();
// (both rule_gpu_cross_thread_reduction.cc: the second shares every step of the first)
// (rule_gpu_cross_thread_reduction.cc)
std::unique_ptr<SketchRule> make_gpu_thread_per_element_rule();  // rule_gpu_thread_per_element.cc

// The CPU rules in the order they run.
std::vector<std::unique_ptr<SketchRule>> cpu_sketch_rules();
// The CUDA rules in the order they run.
std::vector<std::unique_ptr<SketchRule>> gpu_sketch_rules();

// The sketches of a subgraph on a target: one per combination of the forking rules that
// apply, the first built with those whose first() says so and none of the others (its
// default point is the -O0 schedule).
Sketches generate_sketches(const ir::TeProgram& program, const ir::Target& target);
// The first of them.
Sketch generate_sketch(const ir::TeProgram& program, const ir::Target& target);

}  // namespace tlmc::scheduler
