#include "scheduler/sketch.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <sstream>

#include "ir/diagnostic.h"
#include "scheduler/sketch_rules.h"

namespace tlmc::scheduler {
namespace {

constexpr std::array<std::pair<SpaceKind, std::string_view>, 7> kKindNames = {{
    {SpaceKind::Tile, "tile"},
    {SpaceKind::ComputeAt, "compute_at"},
    {SpaceKind::Parallel, "parallel"},
    {SpaceKind::Vectorize, "vectorize"},
    {SpaceKind::Unroll, "unroll"},
    {SpaceKind::Layout, "layout"},
    {SpaceKind::Tensorize, "tensorize"},
}};

constexpr std::string_view kTextHeader = "tlmc-schedule 2";

// Runs a step with `value` on a copy of `run`; nullopt when a decision does not apply.
std::optional<SketchRun> try_step(const SketchRun& run, const SketchStep& step, int64_t value) {
  SketchRun next = run;
  try {
    step.emit(next, value);
  } catch (const InvalidDecision&) {
    return std::nullopt;
  }
  if (step.space) next.values.push_back(value);
  return next;
}

// The run after steps [from, end) with each space at its smallest value that applies (and
// the steps after it to the next space); nullopt when some space has none.
std::optional<SketchRun> smallest_completion(const std::vector<SketchStep>& steps, size_t from,
                                             SketchRun run) {
  for (size_t k = from; k < steps.size(); ++k) {
    if (!steps[k].space) {
      std::optional<SketchRun> next = try_step(run, steps[k], 0);
      if (!next) return std::nullopt;
      run = std::move(*next);
      continue;
    }
    std::vector<int64_t> values = steps[k].candidates(run);
    std::sort(values.begin(), values.end());
    std::optional<SketchRun> next;
    for (int64_t v : values)
      if ((next = try_step(run, steps[k], v))) break;
    if (!next) return std::nullopt;
    run = std::move(*next);
  }
  return run;
}

}  // namespace

std::string_view space_kind_name(SpaceKind k) {
  for (const auto& [kind, name] : kKindNames)
    if (kind == k) return name;
  return "";
}

std::optional<SpaceKind> parse_space_kind(std::string_view name) {
  for (const auto& [kind, n] : kKindNames)
    if (n == name) return kind;
  return std::nullopt;
}

void SketchRun::emit(Decision d) {
  apply_decision_in_place(state, d);
  decisions.push_back(std::move(d));
}

int64_t SketchRun::position(int stage, const std::string& iter) const {
  const StageState& s = state.stages.at(static_cast<size_t>(stage));
  for (size_t i = 0; i < s.leaves.size(); ++i)
    if (s.iters[static_cast<size_t>(s.leaves[i])].name == iter) return static_cast<int64_t>(i);
  throw InvalidDecision("stage " + std::to_string(stage) + " has no loop " + iter);
}

std::vector<Space> Sketch::spaces() const {
  std::vector<Space> out;
  for (const SketchStep& s : steps_)
    if (s.space) out.push_back(*s.space);
  return out;
}

std::vector<Decision> Sketch::decisions(const std::vector<int64_t>& values) const {
  SketchCursor c(*this);
  for (int64_t v : values) {
    if (c.done()) throw InvalidDecision("more values than the sketch has spaces");
    c.choose(v);
  }
  if (!c.done()) throw InvalidDecision("fewer values than the sketch has spaces");
  return c.run().decisions;
}

SketchCursor::SketchCursor(const Sketch& sketch) : sketch_(sketch), run_(sketch.base()) {
  advance();
}

bool SketchCursor::done() const { return next_ >= sketch_.steps().size(); }

const Space& SketchCursor::space() const {
  TLMC_ASSERT(!done(), "no space left in sketch " << sketch_.name());
  return *sketch_.steps()[next_].space;
}

void SketchCursor::choose(int64_t value) {
  TLMC_ASSERT(!done(), "no space left in sketch " << sketch_.name());
  bool listed = false;
  for (int64_t v : valid_) listed = listed || v == value;
  const Space& s = space();
  if (!listed)
    throw InvalidDecision(std::string(space_kind_name(s.kind)) + " " + s.stage + " " + s.axis +
                          ": " + std::to_string(value) + " is not a valid value here");
  std::optional<SketchRun> next = try_step(run_, sketch_.steps()[next_], value);
  TLMC_ASSERT(next, "a listed value failed to apply");
  run_ = std::move(*next);
  ++next_;
  advance();
}

void SketchCursor::advance() {
  valid_.clear();
  const std::vector<SketchStep>& steps = sketch_.steps();
  for (; next_ < steps.size() && !steps[next_].space; ++next_) {
    std::optional<SketchRun> next = try_step(run_, steps[next_], 0);
    // A fixed step fails only if a listed value led here: the check below prevents that.
    TLMC_ASSERT(next, "fixed step " << next_ << " of sketch " << sketch_.name() << " failed");
    run_ = std::move(*next);
  }
  if (done()) return;
  // A value is valid when its own step and the fixed steps after it apply (and, where the
  // step asks, a completion of the whole sketch).
  for (int64_t v : steps[next_].candidates(run_)) {
    std::optional<SketchRun> r = try_step(run_, steps[next_], v);
    size_t k = next_ + 1;
    for (; r && k < steps.size() && !steps[k].space; ++k) r = try_step(*r, steps[k], 0);
    if (r && steps[next_].needs_completion) r = smallest_completion(steps, k, *r);
    if (r) valid_.push_back(v);
    TLMC_ASSERT(v >= 0 && v <= kLargestSpaceValue,
                "space " << next_ << " of sketch " << sketch_.name() << " lists " << v);
  }
  TLMC_ASSERT(!valid_.empty(),
              "space " << next_ << " of sketch " << sketch_.name() << " has no valid value");
}

std::optional<std::vector<Decision>> schedule_from_record(const std::string& text,
                                                          const ir::TeProgram& program,
                                                          const ir::Target& target) {
  try {
    if (std::optional<std::vector<Decision>> list = parse_schedule_record(text)) {
      apply_schedule(program, *list);
      return list;
    }
    const Sketches sketches = generate_sketches(program, target);
    if (std::optional<SpacePoint> point = parse_space_schedule(sketches, text))
      return sketches[point->sketch].decisions(point->values);
  } catch (const InvalidDecision&) {
  }
  return std::nullopt;
}

int64_t SketchCursor::stand_in(int64_t value) const {
  auto listed = [this](int64_t v) {
    return std::find(valid_.begin(), valid_.end(), v) != valid_.end();
  };
  if (listed(value)) return value;
  if (const auto& equivalent = sketch_.steps()[next_].equivalent) {
    if (listed(equivalent(value))) return equivalent(value);
  }
  int64_t nearest = valid_.front();
  for (int64_t v : valid_)
    if (std::llabs(v - value) < std::llabs(nearest - value)) nearest = v;
  return nearest;
}

int64_t SketchCursor::default_value() const {
  const SketchStep& step = sketch_.steps()[next_];
  TLMC_ASSERT(step.fallback,
              "space " << next_ << " of sketch " << sketch_.name() << " has no default");
  const int64_t v = step.fallback(run_, valid_);
  TLMC_ASSERT(std::find(valid_.begin(), valid_.end(), v) != valid_.end(),
              "the default " << v << " of space " << next_ << " is not a valid value");
  return v;
}

std::vector<int64_t> default_values(const Sketch& sketch) {
  SketchCursor c(sketch);
  while (!c.done()) c.choose(c.default_value());
  return c.run().values;
}

std::vector<int64_t> random_values(const Sketch& sketch, std::mt19937_64& rng) {
  SketchCursor c(sketch);
  while (!c.done()) {
    const std::vector<int64_t>& valid = c.valid_values();
    c.choose(valid[std::uniform_int_distribution<size_t>(0, valid.size() - 1)(rng)]);
  }
  return c.run().values;
}

SpacePoint random_point(const Sketches& sketches, std::mt19937_64& rng) {
  TLMC_ASSERT(!sketches.empty(), "a subgraph without sketches");
  const size_t s = std::uniform_int_distribution<size_t>(0, sketches.size() - 1)(rng);
  return SpacePoint{s, random_values(sketches[s], rng)};
}

std::vector<Decision> default_schedule(const ir::TeProgram& program, const ir::Target& target) {
  const Sketch sketch = generate_sketch(program, target);
  return sketch.decisions(default_values(sketch));
}

std::vector<Decision> random_schedule(const ir::TeProgram& program, const ir::Target& target,
                                      uint64_t seed) {
  const Sketches sketches = generate_sketches(program, target);
  std::mt19937_64 rng(seed);
  const SpacePoint p = random_point(sketches, rng);
  return sketches[p.sketch].decisions(p.values);
}

std::string space_schedule_text(const Sketch& sketch, const std::vector<int64_t>& values) {
  std::ostringstream os;
  os << kTextHeader << "\nsketch " << sketch.name() << "\n";
  const std::vector<Space> spaces = sketch.spaces();
  TLMC_ASSERT(spaces.size() == values.size(), "one value per space");
  for (size_t i = 0; i < spaces.size(); ++i)
    os << space_kind_name(spaces[i].kind) << " " << spaces[i].stage << " " << spaces[i].axis << " "
       << values[i] << "\n";
  return os.str();
}

std::optional<std::vector<int64_t>> parse_space_schedule(const Sketch& sketch,
                                                         const std::string& text) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kTextHeader) return std::nullopt;
  if (!std::getline(in, line) || line != "sketch " + sketch.name()) return std::nullopt;
  std::vector<int64_t> values;
  for (const Space& s : sketch.spaces()) {
    if (!std::getline(in, line)) return std::nullopt;
    std::istringstream words(line);
    std::string kind, stage, axis, rest;
    int64_t v = 0;
    if (!(words >> kind >> stage >> axis >> v) || (words >> rest)) return std::nullopt;
    if (kind != space_kind_name(s.kind) || stage != s.stage || axis != s.axis) return std::nullopt;
    values.push_back(v);
  }
  if (std::getline(in, line) && !line.empty()) return std::nullopt;
  return values;
}

std::string space_schedule_text(const Sketches& sketches, const SpacePoint& point) {
  TLMC_ASSERT(point.sketch < sketches.size(), "no sketch " << point.sketch);
  return space_schedule_text(sketches[point.sketch], point.values);
}

std::optional<SpacePoint> parse_space_schedule(const Sketches& sketches, const std::string& text) {
  for (size_t s = 0; s < sketches.size(); ++s)
    if (std::optional<std::vector<int64_t>> v = parse_space_schedule(sketches[s], text))
      return SpacePoint{s, std::move(*v)};
  return std::nullopt;
}

std::optional<SpacePoint> listed_space_point(const Sketches& sketches, const std::string& text) {
  std::optional<SpacePoint> point = parse_space_schedule(sketches, text);
  try {
    if (point) sketches[point->sketch].decisions(point->values);
  } catch (const InvalidDecision&) {
    return std::nullopt;
  }
  return point;
}

}  // namespace tlmc::scheduler
