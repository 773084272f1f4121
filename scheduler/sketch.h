// Sketches and their decision spaces (design.md: "a schedule is a sequence of decisions, each
// a choice from a finite space that the sketch rules derive from the subgraph and the
// target"). A sketch is an ordered list of steps: fixed steps emit decisions of their own;
// a space step lists the values it may take given the values chosen before it, and emits the
// decisions of the value chosen. Random sampling, search and the language model all walk a
// sketch with a SketchCursor: every value the cursor lists applies, so a schedule built only
// from listed values never fails.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ir/target.h"
#include "ir/te.h"
#include "scheduler/decision.h"

namespace tlmc::scheduler {

enum class SpaceKind {
  Tile,       // the extent of one split level of an axis (scheduler/sketch_steps.h, tile_sizes)
  ComputeAt,  // where a stage is computed: 0 at the root, 1 inlined, 2 + L inside loop level L
  Parallel,   // 0: serial; 1: the outer tile loops fused and run in parallel; 1 + k: the same
              // with the k-th outer loop first (scheduler/sketch_steps.h)
  Vectorize,  // 1: the innermost loop runs over SIMD lanes; 0: scalar
  Unroll,     // the largest product of iteration counts unrolled (auto-unroll max step)
  Layout,     // of a constant operand: 0 as the model lays it out, 1 packed in the order the
              // loops read it (scheduler/pack_constants.h)
  Tensorize,  // of a product of bfloat16 matrices: 0 by its loops, 1 by the bf16 unit
              // (scheduler/tile_product.h); its later spaces then each list one value
};
std::string_view space_kind_name(SpaceKind k);
std::optional<SpaceKind> parse_space_kind(std::string_view name);

// No space lists a value above this one (a tile level holds at most this many iterations; the
// outermost level, which no space names, takes the rest): the tensor language has one token
// per value up to it (lm/vocabulary.h).
constexpr int64_t kLargestSpaceValue = 4096;

// One decision space, named by stable roles: "tile conv ow.2", "unroll conv -".
struct Space {
  SpaceKind kind;
  std::string stage;  // the stage's role name
  std::string axis;   // the axis and level ("oh.1"); "-" where the space has none
  bool operator==(const Space& o) const {
    return kind == o.kind && stage == o.stage && axis == o.axis;
  }
};

// The state a sketch's steps build: the schedule state and the decisions so far.
struct SketchRun {
  ScheduleState state;
  std::vector<Decision> decisions;
  std::vector<int64_t> values;  // of the space steps passed so far
  // Applies a decision and keeps it. InvalidDecision when it does not fit, and the run is
  // then left part-changed: steps and rules emit on a trial copy, dropped on failure.
  void emit(Decision d);
  // Position of the loop named `iter` among the leaves of `stage`; InvalidDecision if absent.
  int64_t position(int stage, const std::string& iter) const;
};

struct SketchStep {
  std::optional<Space> space;  // absent: a fixed step, emit(run, 0)
  // The values the space may take given the run so far (applicability is then checked by
  // emitting each); unused for fixed steps.
  std::function<std::vector<int64_t>(const SketchRun&)> candidates;
  std::function<void(SketchRun&, int64_t)> emit;
  // The value the -O0 policy takes, given the values valid here (it returns one of them).
  std::function<int64_t(const SketchRun&, const std::vector<int64_t>& valid)> fallback;
  // A value that gives the same loops as `value` does where the space no longer lists it
  // (SketchCursor::stand_in); absent: none but itself.
  std::function<int64_t(int64_t value)> equivalent;
  // A value is listed only where the rest of the sketch can follow it, each later space
  // taking its smallest value that applies: for spaces whose values bound what later fixed
  // steps may do (a block's tile and the shared memory its copies take).
  bool needs_completion = false;
};

class Sketch {
 public:
  Sketch(std::string name, SketchRun base) : name_(std::move(name)), base_(std::move(base)) {}
  const std::string& name() const { return name_; }
  const SketchRun& base() const { return base_; }
  void add(SketchStep step) { steps_.push_back(std::move(step)); }
  const std::vector<SketchStep>& steps() const { return steps_; }
  std::vector<Space> spaces() const;
  // The decisions of a full assignment (one value per space, in order); InvalidDecision
  // when a value is not one the space lists.
  std::vector<Decision> decisions(const std::vector<int64_t>& values) const;

 private:
  std::string name_;
  SketchRun base_;  // the program with the sketch's structural decisions (inline, cache)
  std::vector<SketchStep> steps_;
};

// The sketches of a subgraph (scheduler/sketch_rules.h): the first is the default one.
using Sketches = std::vector<Sketch>;

// A point of a subgraph's schedule space: a sketch, and one value per space of it.
struct SpacePoint {
  size_t sketch = 0;
  std::vector<int64_t> values;
  bool operator==(const SpacePoint& o) const { return sketch == o.sketch && values == o.values; }
  bool operator<(const SpacePoint& o) const {
    return sketch != o.sketch ? sketch < o.sketch : values < o.values;
  }
};

// Walks a sketch space by space: the question both sampling and masked decoding ask.
class SketchCursor {
 public:
  explicit SketchCursor(const Sketch& sketch);
  bool done() const;
  const Space& space() const;  // the next space; not done()
  // The values of the next space that apply given the values chosen so far; never empty.
  const std::vector<int64_t>& valid_values() const { return valid_; }
  // The -O0 policy's value for the next space: one of valid_values().
  int64_t default_value() const;
  // The valid value that stands in for `value` (one the next space took in another point):
  // itself when valid, else its equivalent (SketchStep::equivalent) when valid, else the
  // valid value nearest to it.
  int64_t stand_in(int64_t value) const;
  // Chooses a value (one of valid_values(); InvalidDecision otherwise) and moves on.
  void choose(int64_t value);
  const SketchRun& run() const { return run_; }

 private:
  void advance();  // runs fixed steps up to the next space, and lists its valid values
  const Sketch& sketch_;
  size_t next_ = 0;  // index of the next step
  SketchRun run_;
  std::vector<int64_t> valid_;
};

// The sketch's default point: each space takes the -O0 policy's value (the search starts
// from it, and it measures what -O0 would do in the space).
std::vector<int64_t> default_values(const Sketch& sketch);

// One value per space, each drawn uniformly from the values valid at that point.
std::vector<int64_t> random_values(const Sketch& sketch, std::mt19937_64& rng);

// A point drawn at random: a sketch uniformly, then one value per space as random_values.
SpacePoint random_point(const Sketches& sketches, std::mt19937_64& rng);

// Text form (the tensor sentence of a schedule; round-trips exactly):
//   tlmc-schedule 2
//   sketch tiled
//   tile out i0.1 4
//   ...
std::string space_schedule_text(const Sketch& sketch, const std::vector<int64_t>& values);
// The inverse, checked against `sketch` (its name, each space in order); nullopt otherwise.
std::optional<std::vector<int64_t>> parse_space_schedule(const Sketch& sketch,
                                                         const std::string& text);
// The same for a point of several sketches (the one the text names).
std::string space_schedule_text(const Sketches& sketches, const SpacePoint& point);
std::optional<SpacePoint> parse_space_schedule(const Sketches& sketches, const std::string& text);
// The same, and only where every value is one its space lists given the values before it:
// a record of the spaces of another tlmc, or with a value a space no longer lists, is none.
std::optional<SpacePoint> listed_space_point(const Sketches& sketches, const std::string& text);

// The decisions of a tuning record's schedule text for `program`: a decision list
// ("tlmc-schedule 1") or a point of the program's sketch ("tlmc-schedule 2"). nullopt when
// it is of neither form, or does not apply to the program (a record of another tlmc).
std::optional<std::vector<Decision>> schedule_from_record(const std::string& text,
                                                          const ir::TeProgram& program,
                                                          const ir::Target& target);

// The -O0 schedule of `program`: its sketch's default point.
std::vector<Decision> default_schedule(const ir::TeProgram& program, const ir::Target& target);

// A schedule of `program` drawn at random from its sketch's spaces (`seed` picks which).
std::vector<Decision> random_schedule(const ir::TeProgram& program, const ir::Target& target,
                                      uint64_t seed);

}  // namespace tlmc::scheduler
