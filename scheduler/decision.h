// The closed vocabulary of schedule decisions (STYLE.md §4). A schedule is a sequence of
// decisions; the same sequence, printed, is the tensor sentence that search, the language
// model, the tuning records and codegen share. Each kind owns its validation, application
// and text form in the one table of decision.cc: adding a kind edits that table.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "scheduler/schedule_state.h"

namespace tlmc::scheduler {

enum class DecisionKind {
  Inline,      // stage: substitute a pointwise stage into its consumers
  CacheWrite,  // stage: compute a reduction into a new local stage "<name>.local" placed before it
  RFactor,     // stage, args {reduction axis, factor f}: partial reductions over f slices of the
               // axis in a new stage "<name>.rf" before it (a spatial axis of extent f), which
               // the stage then reduces
  ComputeAt,   // stage, target, args {target loop position}: compute inside a consumer's loop
  Split,       // stage, args {loop position, inner factors...}: one loop into several; the
               // outer one counts ceil(extent / product) tiles. Factors that leave a
               // remainder are allowed on a stage with no reduction, never above the
               // extent: the last tile is shifted back to end at the extent, and the
               // elements it shares with the tile before it are computed and stored twice,
               // with the same value (a reduction would accumulate them twice)
  Reorder,     // stage, args {new order of loop positions}
  Fuse,        // stage, args {first loop position, count}: consecutive loops into one
  Parallel,    // stage, args {loop position}
  Vectorize,   // stage, args {loop position}: the innermost loop, over SIMD lanes
  Unroll,      // stage, args {loop position}
  Pack,        // stage, args {operand k}: the k-th tensor the stage reads (in order of first
               // load in its body), a constant input read by no other stage, is passed as a
               // copy laid out in the order the stage's loops read it (pack_constants.h)
  CacheRead,   // stage, args {operand k}: the stage reads its k-th operand through a copy in
               // the block's shared memory (CUDA), a new stage "<tensor>.shared" placed
               // before it; computed inside one of the stage's loops, the block's threads fill
               // it together (reads past the tensor's bounds, where the stage pads, give 0)
  Bind,        // stage, args {loop position, 0 | 1}: a spatial loop runs as the blocks of a
               // CUDA grid (0: blockIdx.x, the outermost loop of a stage at the root) or the
               // threads of a block (1: threadIdx.x, inside the block loop); one of each
  ThreadReduce,  // stage, args {loop position, threads T}: the reduction loop of a stage at
                 // the root or computed in its consumer's block loop (then into shared
                 // memory, every such stage of the block with the same T, no thread loop of
                 // the consumer wider), its innermost and only one, is shared by the T
                 // threads of a block (CUDA; T a multiple of 32 up to 1024, the stage's
                 // thread loop): thread t accumulates iterations t, t + T, ..., and the block
                 // combines the partial results (warp shuffles, then shared memory across
                 // warps). The stage's loops are final after it.
  Tensorize,     // stage, args {0}: the stage, a product of bfloat16 matrices
                 // (scheduler/tile_product.h), is computed whole by the target's bf16 unit
                 // (AMX's tiles, else AVX512_BF16's vdpbf16ps),
                 // its constant operand packed for it; after its placement, before any
                 // other decision on its loops, which are final after it.
};

struct Decision {
  DecisionKind kind;
  int stage = 0;
  int target = -1;  // ComputeAt only
  std::vector<int64_t> args;
  bool operator==(const Decision& o) const {
    return kind == o.kind && stage == o.stage && target == o.target && args == o.args;
  }
};

// A decision that does not fit the state it is applied to: recoverable, the proposer
// (default rules, search, the language model) skips it.
class InvalidDecision : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Checks `d` against `st` and applies it; throws InvalidDecision and leaves `st` unchanged
// when it does not fit.
void apply_decision(ScheduleState& st, const Decision& d);
// The same without a copy of the state: on an InvalidDecision `st` is left part-changed,
// for a caller that then discards it (a trial copy of its own).
void apply_decision_in_place(ScheduleState& st, const Decision& d);

// Applies every decision in order to a fresh state of `program`.
ScheduleState apply_schedule(const ir::TeProgram& program, const std::vector<Decision>& schedule);

// Text form, one decision: "split 2 [0, 8, 16]" (kind, stage, target where it has one, args).
std::string decision_str(const Decision& d);
std::string schedule_str(const std::vector<Decision>& schedule);  // one per line
// The inverse of schedule_str; nullopt on malformed text.
std::optional<std::vector<Decision>> parse_schedule(const std::string& text);

// The schedule as a tuning record stores it: a first line naming the text format and its
// version ("tlmc-schedule 1"), then schedule_str. nullopt for another format or version.
std::string schedule_record_text(const std::vector<Decision>& schedule);
std::optional<std::vector<Decision>> parse_schedule_record(const std::string& text);

std::string_view decision_kind_name(DecisionKind k);

// The types whose reductions a warp's lanes combine by shuffles (ThreadReduce).
inline bool warp_shuffles(ir::DType t) {
  return t == ir::DType::Float32 || t == ir::DType::Int32 || t == ir::DType::Int64;
}

// Largest local buffer, in bytes, a ComputeAt may create (it lives on the stack).
constexpr int64_t kMaxLocalBytes = 128 * 1024;

}  // namespace tlmc::scheduler
