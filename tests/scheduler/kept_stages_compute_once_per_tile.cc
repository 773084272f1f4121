// A pointwise stage that computes a transcendental function and is read by a reduction and
// by another stage (Softmax's exp(x - max): the row's sum and the output read it) is not
// inlined into both: it is computed once per tile, into a local buffer both read. One that
// no reduction reads (a GELU epilogue's erf) is inlined as before.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "ir/loop.h"
#include "ir/target.h"
#include "scheduler/decision.h"
#include "scheduler/lower_schedule.h"
#include "scheduler/schedule_support.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"

namespace tlmc::scheduler {
namespace {

using test::program_of;

ir::Target avx512() {
  ir::Target t = *ir::parse_target("x86-64-avx512");
  t.cores = 2;
  return t;
}

// The loops of a one-subgraph model's -O0 schedule, as --dump=loops prints them.
std::string default_loops(const std::string& yaml) {
  const ir::TeProgram program = program_of(yaml);
  ScheduleState st(program);
  for (const Decision& d : default_schedule(program, avx512())) apply_decision(st, d);
  return ir::loop_str(lower_schedule(st, "k"));
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string model(const std::string& nodes) {
  return "tlmc: 1\nname: m\ninputs:\n  x: {shape: [12, 128, 128]}\nnodes:\n" + nodes +
         "outputs: [y]\n";
}

TEST(KeptStages, SoftmaxComputesItsExponentialsOncePerTile) {
  const std::string loops =
      default_loops(model("  - {op: Softmax, inputs: [x], outputs: [y], attrs: {axis: -1}}\n"));
  EXPECT_EQ(count(loops, "exp("), 1u) << loops;
  EXPECT_NE(loops.find("local y.exp"), std::string::npos) << loops;
}

TEST(KeptStages, AStageNoReductionReadsIsInlined) {
  // A product's erf-form GELU epilogue: erf(z / sqrt 2) is read by the output alone.
  const std::string loops = default_loops(R"(tlmc: 1
name: m
inputs:
  x: {shape: [128, 64]}
weights:
  w: {shape: [64, 256], init: {uniform: [-1, 1]}, seed: 1}
  s: {shape: [], init: {uniform: [1.4, 1.5]}}
  one: {shape: [], init: ones}
  half: {shape: [], init: {uniform: [0.5, 0.6]}}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [z]}
  - {op: Div, inputs: [z, s], outputs: [d]}
  - {op: Erf, inputs: [d], outputs: [e]}
  - {op: Add, inputs: [e, one], outputs: [a]}
  - {op: Mul, inputs: [z, a], outputs: [m]}
  - {op: Mul, inputs: [m, half], outputs: [y]}
outputs: [y]
)");
  EXPECT_EQ(count(loops, "erf("), 1u) << loops;
  EXPECT_EQ(count(loops, "local "), 1u) << "the product's tile alone:\n" << loops;
}

// Every value a space lists leads to a complete point: no later space is left with no valid
// value. A reduction computed per outer tile once left the exponentials it reads no place
// (too large for that tile, and not allowed inside a loop their reader runs outside of).
TEST(KeptStages, EveryRandomPointOfASoftmaxCompletes) {
  for (const char* shape : {"[1, 8, 128, 128]", "[2, 40000]", "[3, 5, 7]", "[4, 1, 300]"}) {
    const ir::TeProgram program =
        program_of("tlmc: 1\nname: m\ninputs:\n  x: {shape: " + std::string(shape) +
                   "}\nnodes:\n  - {op: Softmax, inputs: [x], outputs: [y], attrs: {axis: -1}}\n"
                   "outputs: [y]\n");
    std::mt19937_64 rng(7);
    for (const Sketch& sketch : generate_sketches(program, avx512())) {
      for (int draw = 0; draw < 200; ++draw) {
        const std::vector<int64_t> values = random_values(sketch, rng);
        ScheduleState st = apply_schedule(program, sketch.decisions(values));
        EXPECT_FALSE(ir::loop_str(lower_schedule(st, "k")).empty());
      }
      ScheduleState st = apply_schedule(program, sketch.decisions(default_values(sketch)));
      EXPECT_FALSE(ir::loop_str(lower_schedule(st, "k")).empty()) << shape;
    }
  }
}

// Leaving a producer at the root is listed only where a stage is kept for the reductions
// (where it may be needed); a product's fused tile lists per outer and per middle tile, as
// the language model was trained on.
TEST(KeptStages, OnlyGroupsWithAKeptStageListTheRoot) {
  auto compute_at_values = [](const std::string& yaml) {
    std::set<int64_t> values;
    const ir::TeProgram program = program_of(yaml);
    for (const Sketch& sketch : generate_sketches(program, avx512())) {
      SketchCursor c(sketch);
      const std::vector<int64_t> point = default_values(sketch);
      for (size_t i = 0; !c.done(); ++i) {
        if (c.space().kind == SpaceKind::ComputeAt)
          values.insert(c.valid_values().begin(), c.valid_values().end());
        c.choose(point[i]);
      }
    }
    return values;
  };
  EXPECT_TRUE(
      compute_at_values(model("  - {op: Softmax, inputs: [x], outputs: [y], attrs: {axis: -1}}\n"))
          .count(1));
  EXPECT_FALSE(compute_at_values(R"(tlmc: 1
name: m
inputs:
  x: {shape: [64, 96]}
weights:
  w: {shape: [96, 128], init: {uniform: [-1, 1]}, seed: 1}
  b: {shape: [128], init: {uniform: [-1, 1]}, seed: 2}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [z]}
  - {op: Add, inputs: [z, b], outputs: [y]}
outputs: [y]
)")
                   .count(1));
}

}  // namespace
}  // namespace tlmc::scheduler
