// The CUDA cross-thread reduction (rule_gpu_cross_thread_reduction.cc, ThreadReduce): what the
// decision accepts, which sketch comes first, and the loop nest it lowers to; the same for
// products of few rows. Running the kernels is tests/codegen/cuda_kernels_run_in_emulation.cc's
// part.
#include <gtest/gtest.h>

#include <functional>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "ir/target.h"
#include "scheduler/gpu_cost_model.h"
#include "scheduler/lower_schedule.h"
#include "scheduler/schedule_support.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"

namespace tlmc::scheduler {
namespace {

using test::error_of;
using test::program_of;

const ir::Target kSm80 = *ir::parse_target("cuda-sm80");

std::string layer_norm_yaml(int rows, int width) {
  return "tlmc: 1\nname: ln\ninputs:\n  x: {shape: [" + std::to_string(rows) + ", " +
         std::to_string(width) + "]}\nweights:\n  g: {shape: [" + std::to_string(width) +
         "], init: ones}\n  b: {shape: [" + std::to_string(width) +
         "], init: zeros}\nnodes:\n  - {op: LayerNormalization, inputs: [x, g, b], outputs: "
         "[y], attrs: {axis: -1}}\noutputs: [y]\n";
}

// A row's mean: stage 0 sums the row, stage 1 scales the sum.
std::string row_mean_yaml(int rows, int width) {
  return "tlmc: 1\nname: s\ninputs:\n  x: {shape: [" + std::to_string(rows) + ", " +
         std::to_string(width) +
         "]}\nnodes:\n  - {op: ReduceMean, inputs: [x], outputs: [y], attrs: {axes: [-1], "
         "keepdims: 0}}\noutputs: [y]\n";
}

// Counts the statements of a loop nest that `match` accepts.
int count(const ir::Stmt& s, const std::function<bool(const ir::StmtNode&)>& match) {
  int n = match(*s) ? 1 : 0;
  for (const ir::Stmt& b : s->body) n += count(b, match);
  return n;
}

int shuffles(const ir::Stmt& s) {
  int n = 0;
  std::function<void(const ir::Stmt&)> walk = [&](const ir::Stmt& t) {
    if (t->value)
      ir::visit_expr(t->value, [&](const ir::ExprNode& e) {
        n += e.kind == ir::ExprKind::Binary && e.binary_op == ir::BinaryOp::ShuffleXor;
      });
    for (const ir::Stmt& b : t->body) walk(b);
  };
  walk(s);
  return n;
}

TEST(ThreadReduce, TakesTheInnermostReductionLoopOfWholeWarps) {
  // A row sum of [6, 100]: [i0, r1].
  ScheduleState st(program_of(row_mean_yaml(6, 100)));
  ASSERT_EQ(error_of(st, {DecisionKind::Bind, 0, -1, {0, 0}}), "");
  EXPECT_EQ(error_of(st, {DecisionKind::ThreadReduce, 0, -1, {1, 48}}),
            "thread_reduce 0 [1, 48]: the threads are whole warps of 32, at most 1024");
  EXPECT_EQ(error_of(st, {DecisionKind::ThreadReduce, 0, -1, {1, 2048}}),
            "thread_reduce 0 [1, 2048]: the threads are whole warps of 32, at most 1024");
  EXPECT_EQ(error_of(st, {DecisionKind::ThreadReduce, 0, -1, {0, 64}}),
            "thread_reduce 0 [0, 64]: the shared loop is the innermost");
  EXPECT_EQ(error_of(st, {DecisionKind::ThreadReduce, 0, -1, {1, 64}}), "");
  EXPECT_EQ(st.stages[0].reduce_threads, 64);
  EXPECT_EQ(error_of(st, {DecisionKind::Unroll, 0, -1, {1}}),
            "unroll 0 [1]: the loop is already annotated");
  EXPECT_EQ(error_of(st, {DecisionKind::Split, 0, -1, {0, 2}}),
            "split 0 [0, 2]: the stage's reduction is shared by threads: its loops are final");

  // A pointwise stage has no reduction to share.
  ScheduleState relu(program_of(
      "tlmc: 1\nname: r\ninputs:\n  x: {shape: [3, 50]}\nnodes:\n  - {op: Relu, inputs: [x], "
      "outputs: [y]}\noutputs: [y]\n"));
  EXPECT_EQ(error_of(relu, {DecisionKind::ThreadReduce, 0, -1, {1, 32}}),
            "thread_reduce 0 [1, 32]: the shared loop is the stage's only reduction loop");
}

TEST(ThreadReduce, LowersToStridedPartsShufflesAndAGuardedLastRound) {
  ScheduleState st(program_of(row_mean_yaml(6, 100)));
  for (const Decision& d : std::vector<Decision>{{DecisionKind::Bind, 0, -1, {0, 0}},
                                                 {DecisionKind::ThreadReduce, 0, -1, {1, 64}}})
    apply_decision(st, d);
  const ir::LoopProgram p = lower_schedule(st, "s");
  const std::vector<ir::GpuRoot> roots = ir::gpu_roots(p);
  ASSERT_EQ(roots.size(), 2u);  // the sum, then the scaling, not bound here
  EXPECT_EQ(roots[0].blocks, 6);
  EXPECT_EQ(roots[0].threads, 64);
  // Five butterfly steps; two warps meet in shared memory after one barrier; the last of
  // two rounds of 64 over 100 iterations tests the bound; thread 0 stores.
  EXPECT_EQ(shuffles(p.body), 5);
  EXPECT_EQ(count(p.body, [](const ir::StmtNode& s) { return s.kind == ir::StmtKind::Barrier; }),
            1);
  EXPECT_EQ(count(p.body, [](const ir::StmtNode& s) { return s.kind == ir::StmtKind::If; }), 3);
  const std::string text = ir::loop_str(p);
  EXPECT_NE(text.find("in 0..2:"), std::string::npos) << text;
  EXPECT_NE(text.find("< 100)"), std::string::npos) << text;
  EXPECT_NE(text.find("shared y.sum.warps: float32[2]"), std::string::npos) << text;
}

TEST(CrossThreadReduction, ALayerNormalizationIsOneKernelOfRows) {
  const Sketches sketches = generate_sketches(program_of(layer_norm_yaml(128, 768)), kSm80);
  ASSERT_GE(sketches.size(), 2u);
  // 128 rows keep few threads busy one a row: the cross-thread sketch is the -O0 one.
  EXPECT_EQ(sketches[0].name(), "cross_thread_reduction");
  EXPECT_EQ(sketches[1].name(), "thread_per_element");
  const std::vector<Decision> d = sketches[0].decisions(default_values(sketches[0]));
  const ir::LoopProgram p = lower_schedule(apply_schedule(sketches[0].base().state.te, d), "ln");
  const std::vector<ir::GpuRoot> roots = ir::gpu_roots(p);
  ASSERT_EQ(roots.size(), 1u) << ir::loop_str(p);
  EXPECT_EQ(roots[0].blocks, 128);
  EXPECT_EQ(roots[0].threads, 256);
  // The mean and the variance: five shuffles each; their warps meet in shared memory, the
  // variance waits for the mean, the row's elements for both, and the block ends with one.
  EXPECT_EQ(shuffles(p.body), 10);
  EXPECT_EQ(count(p.body, [](const ir::StmtNode& s) { return s.kind == ir::StmtKind::Barrier; }), 5)
      << ir::loop_str(p);
}

TEST(ThreadReduce, TheReductionsOfABlockShareOneThreadCount) {
  // LayerNormalization: the mean (0) and the variance (1) computed in the output's (2)
  // block loop. Their barriers and shuffles take the whole block: one thread count.
  ScheduleState st(program_of(layer_norm_yaml(4, 100)));
  for (const Decision& d : std::vector<Decision>{{DecisionKind::Bind, 2, -1, {0, 0}},
                                                 {DecisionKind::ComputeAt, 1, 2, {0}},
                                                 {DecisionKind::ComputeAt, 0, 2, {0}},
                                                 {DecisionKind::Fuse, 0, -1, {0, 2}},
                                                 {DecisionKind::Fuse, 1, -1, {0, 2}},
                                                 {DecisionKind::ThreadReduce, 0, -1, {1, 64}}})
    ASSERT_EQ(error_of(st, d), "") << decision_str(d);
  EXPECT_EQ(error_of(st, {DecisionKind::ThreadReduce, 1, -1, {1, 32}}),
            "thread_reduce 1 [1, 32]: another reduction in this block is shared by 64 threads");
  EXPECT_EQ(error_of(st, {DecisionKind::ThreadReduce, 1, -1, {1, 64}}), "");
  EXPECT_TRUE(st.stages[1].shared);
}

TEST(CrossThreadReduction, ManyRowsKeepOneThreadARowFirst) {
  // 65536 rows fill the GPU one thread a row: that sketch stays the -O0 one, the other is
  // still searched.
  const Sketches sketches = generate_sketches(program_of(row_mean_yaml(65536, 40)), kSm80);
  ASSERT_EQ(sketches.size(), 2u);
  EXPECT_EQ(sketches[0].name(), "thread_per_element");
  EXPECT_EQ(sketches[1].name(), "cross_thread_reduction");
  EXPECT_EQ(sketches[1].spaces().size(), 1u) << "the sum computed in the mean's blocks";
  // A reduction no longer than a warp is left alone.
  EXPECT_EQ(generate_sketches(program_of(row_mean_yaml(4, 32)), kSm80).size(), 1u);
}

TEST(CrossThreadReduction, ThreadCountsAreWholeWarpsCoveringTheRow) {
  const Sketches sketches = generate_sketches(program_of(row_mean_yaml(3, 200)), kSm80);
  ASSERT_EQ(sketches[0].name(), "cross_thread_reduction");
  SketchCursor cursor(sketches[0]);
  ASSERT_FALSE(cursor.done());
  EXPECT_EQ(cursor.space().axis, "threads");
  EXPECT_EQ(cursor.valid_values(), (std::vector<int64_t>{32, 64, 128, 256}));
  EXPECT_EQ(cursor.default_value(), 128);  // 200 rounded down to whole warps, at most 256
}

// A Gemm of `rows` rows, K 1280 and N 1000 (a classifier's), with a bias; its weight [K, N],
// or [N, K] with transB (the reduction innermost).
std::string gemm_yaml(int rows, bool trans_b) {
  const std::string w = trans_b ? "[1000, 1280]" : "[1280, 1000]";
  return "tlmc: 1\nname: g\ninputs:\n  x: {shape: [" + std::to_string(rows) +
         ", 1280]}\nweights:\n  w: {shape: " + w +
         ", init: {uniform: [-1, 1]}}\n  b: {shape: [1000], init: zeros}\nnodes:\n  - {op: Gemm, "
         "inputs: [x, w, b], outputs: [y], attrs: {transB: " +
         std::string(trans_b ? "1" : "0") + "}}\noutputs: [y]\n";
}

// The analytic model's estimate of a sketch's default point for `program`.
double default_estimate(const ir::TeProgram& program, const Sketch& s) {
  const std::vector<Decision> d = s.decisions(default_values(s));
  return estimate_gpu_time(lower_schedule(apply_schedule(program, d), "g"), kSm80.gpu, {}).seconds;
}

TEST(CrossThreadProduct, AOneRowProductWhoseWeightRunsAlongTheReductionIsSharedByThreads) {
  const ir::TeProgram program = program_of(gemm_yaml(1, true));
  const Sketches sketches = generate_sketches(program, kSm80);
  ASSERT_EQ(sketches.size(), 2u);
  EXPECT_EQ(sketches[0].name(), "cross_thread_product");
  EXPECT_EQ(sketches[1].name(), "shared_cache_read+multi_level_tiling");
  // One block an output element (with its bias), its threads along K, the lanes' reads of
  // the weight consecutive: no shared copies.
  const std::vector<Decision> d = sketches[0].decisions(default_values(sketches[0]));
  const ir::LoopProgram p = lower_schedule(apply_schedule(program, d), "g");
  const std::vector<ir::GpuRoot> roots = ir::gpu_roots(p);
  ASSERT_EQ(roots.size(), 1u) << ir::loop_str(p);
  EXPECT_EQ(roots[0].blocks, 1000);
  EXPECT_EQ(roots[0].threads, 256);
  EXPECT_EQ(shuffles(p.body), 5);
  // The tiled sketch keeps a row of threads with nothing to reuse: by the analytic model,
  // several times slower.
  EXPECT_LT(3 * default_estimate(program, sketches[0]), default_estimate(program, sketches[1]));
}

TEST(CrossThreadProduct, AcrossTheWeightsRowsItIsSearchedAfterTheTiledSketch) {
  // [K, N]: the lanes along K read a column, N apart. The tiled sketch stays the -O0 one.
  const Sketches sketches = generate_sketches(program_of(gemm_yaml(1, false)), kSm80);
  ASSERT_EQ(sketches.size(), 2u);
  EXPECT_EQ(sketches[0].name(), "shared_cache_read+multi_level_tiling");
  EXPECT_EQ(sketches[1].name(), "cross_thread_product");
  // Four rows still are few; sixteen reuse the weight enough to tile it.
  EXPECT_EQ(generate_sketches(program_of(gemm_yaml(4, true)), kSm80)[0].name(),
            "cross_thread_product");
  const Sketches many = generate_sketches(program_of(gemm_yaml(16, true)), kSm80);
  ASSERT_EQ(many.size(), 1u);
  EXPECT_EQ(many[0].name(), "shared_cache_read+multi_level_tiling");
  // A CPU target has no such sketch.
  for (const Sketch& s : generate_sketches(program_of(gemm_yaml(1, true)), ir::host_target()))
    EXPECT_EQ(s.name().find("cross_thread"), std::string::npos) << s.name();
}

// One subgraph of two products, each a graph output, in the order given: a tiled one (64
// rows) and a one-row Gemm with transB (the few-row rule's).
ir::TeProgram two_products(bool tiled_first) {
  const std::string tiled = "  - {op: MatMul, inputs: [a, w1], outputs: [c1]}\n";
  const std::string few = "  - {op: Gemm, inputs: [v, w2], outputs: [c2], attrs: {transB: 1}}\n";
  const ir::Graph g = frontend::read_yaml_text(
      "tlmc: 1\nname: two\ninputs:\n  a: {shape: [64, 128]}\n  v: {shape: [1, 256]}\n"
      "weights:\n  w1: {shape: [128, 128], init: ones}\n  w2: {shape: [500, 256], init: ones}\n"
      "nodes:\n" +
          (tiled_first ? tiled + few : few + tiled) + "outputs: [c1, c2]\n",
      "two.yaml");
  return ir::lower_subgraph(g, {0, 1}).program;
}

TEST(CrossThreadProduct, StandsAsideWhereATiledProductPrecedesIt) {
  // Its steps name stages by index, and the tiled product's shared copies, inserted after
  // it, would move a later stage: there it does not apply.
  for (const bool tiled_first : {true, false}) {
    const ir::TeProgram program = two_products(tiled_first);
    const Sketches sketches = generate_sketches(program, kSm80);
    bool few_row = false;
    for (const Sketch& s : sketches) {
      few_row = few_row || s.name().find("cross_thread_product") != std::string::npos;
      // Every sketch's default point applies and lowers.
      EXPECT_NO_THROW(lower_schedule(apply_schedule(program, s.decisions(default_values(s))), "t"))
          << s.name();
    }
    EXPECT_EQ(few_row, !tiled_first) << ir::te_str(program);
  }
}

}  // namespace
}  // namespace tlmc::scheduler
