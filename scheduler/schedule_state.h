// The state a schedule builds: for every stage of a tensor-expression program, its loops
// (split and fused from the stage's axes, in order, annotated) and where it is computed.
// Decisions (scheduler/decision.h) are the only way to change it.
#pragma once

#include <string>
#include <vector>

#include "ir/loop.h"
#include "ir/te.h"

namespace tlmc::scheduler {

struct Iter {
  int var_id;  // the loop variable
  std::string name;
  int64_t extent;
  bool reduce;
  ir::LoopKind kind = ir::LoopKind::Serial;
  int split_by = -1;  // the relation that consumed this iter as a parent; -1 for a leaf
};

// A split (one parent, children outer to inner) or a fuse (parents outer to inner, one child).
struct IterRelation {
  bool is_split;
  std::vector<int> parents;   // iter ids
  std::vector<int> children;  // iter ids
};

enum class Attach { Root, Inline, At };

struct StageState {
  std::vector<Iter> iters;  // by id; ids [0, axes) are the spatial axes, then the reduce axes
  std::vector<int> leaves;  // iter ids, outermost loop first
  std::vector<IterRelation> relations;
  Attach attach = Attach::Root;
  int at_stage = -1;         // Attach::At: the consumer stage
  int at_iter = -1;          // Attach::At: the consumer's iter id the stage is computed inside
  bool transformed = false;  // split, fuse, reorder or annotation applied
  bool frozen = false;       // another stage is attached inside: its loops may not change
  // CUDA: a copy in the block's shared memory (CacheRead). Computed inside a loop, its region
  // is what every thread of the block reads there, and the block's threads compute it
  // together.
  bool shared = false;
  // CUDA: the threads of a block that share the stage's reduction loop (ThreadReduce); 0
  // where none do.
  int64_t reduce_threads = 0;
  // CPU: computed by the bf16 unit (Tensorize), as one block: its loops are final.
  bool tensorized = false;
  // Attach::At: the region's runs per spatial axis (Region::run), as when it was attached.
  std::vector<int64_t> region_run;
};

struct ScheduleState {
  ir::TeProgram te;  // with inlined stages substituted into their consumers
  std::vector<StageState> stages;
  std::vector<int> packed;  // constant input tensors passed as packed copies (Pack decisions)
  int next_var = 0;

  explicit ScheduleState(ir::TeProgram program);
  const Iter& leaf(int stage, size_t position) const;
  // Stages reading `tensor`, inlined stages excluded (their readers read through them).
  std::vector<int> consumers(int tensor) const;
  // Adds a fresh iter to a stage; returns its id.
  int add_iter(int stage, const std::string& name, int64_t extent, bool reduce);
};

// The value of iter `id` of a stage in terms of its leaf loop variables.
ir::Expr iter_value(const StageState& s, int id);

// The part of a producer's tensor one execution of a consumer's loop body needs: per
// dimension, the first index (in the consumer's outer loop variables) and the number of
// elements. Those are `extent` consecutive indices, or, where `run` is less than `extent`,
// extent / run runs of `run` consecutive indices whose starts are `stride` apart (a CUDA
// thread's register tile when the block's threads interleave: "virtual threads").
struct Region {
  std::vector<ir::Expr> min;
  std::vector<int64_t> extent;
  std::vector<int64_t> run, stride;  // run == extent (stride unused) where consecutive
};

// The region of stage `producer` needed inside loop `at_iter` of stage `consumer`, by its
// readers (the consumer and the stages already attached at that loop). Empty `min` when it
// cannot be expressed (non-affine indices). For a shared producer, the loops bound to
// threads range over all their values: the region serves the whole block. Only a producer
// in a thread's registers (attached in a CUDA kernel, not shared) has strided dimensions;
// elsewhere a strided read is covered by its box, first to last index, as the C targets'
// vectorised loops want.
Region infer_region(const ScheduleState& st, int producer, int consumer, int at_iter);

// Original axis values of a stage (spatial then reduce) in its leaf loop variables,
// offset by the region for attached stages.
std::vector<ir::Expr> axis_values(const ScheduleState& st, int stage);

}  // namespace tlmc::scheduler
