// Products computed by a CPU's bf16 unit (the Tensorize decision, --precision bf16): AMX's
// tiles, and vdpbf16ps where AVX512_BF16 is present without AMX. The decision's checks,
// schedules drawn at random from spaces that list it on odd shapes (rows below, at and past
// a tile's 16 and not a multiple of it, a reduction shorter than a step of 32, with a tail,
// of odd length, columns fewer than 16), each library against the reference interpreter
// (on a CPU with the unit), and the library's source compiled for either on any host.
#include <gtest/gtest.h>

#include <sstream>
#include <tuple>
#include <utility>

#include "driver/check.h"
#include "driver/compile.h"
#include "frontend/reduced_precision.h"
#include "frontend/yaml_reader.h"
#include "ir/loop.h"
#include "ir/lower.h"
#include "scheduler/channels_last_activations.h"
#include "scheduler/decision.h"
#include "scheduler/partition.h"
#include "scheduler/schedule_support.h"
#include "scheduler/tile_product.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

// Model `name`: a [rows, k] input times a [k, columns] weight (uniform in [-1, 1] from
// `seed`), demoted to bfloat16 when compiled with --precision bf16.
std::string product_yaml(const std::string& name, const std::string& a_shape, int64_t k,
                         int64_t columns, int seed = 9) {
  std::ostringstream y;
  y << "tlmc: 1\nname: " << name << "\ninputs:\n  a: {shape: " << a_shape << "}\nweights:\n"
    << "  w: {shape: [" << k << ", " << columns << "], init: {uniform: [-1, 1]}, seed: " << seed
    << "}\nnodes:\n  - {op: MatMul, inputs: [a, w], outputs: [y]}\noutputs: [y]\n";
  return y.str();
}

// The product's own kernel (the one of its `op` node, reading the bfloat16 weight) of
// `yaml` in bf16.
ir::TeProgram product_program(const std::string& yaml, const std::string& op = "MatMul") {
  ir::Graph g = frontend::demote_products_to_bf16(frontend::read_yaml_text(yaml, "model.yaml"),
                                                  frontend::PrecisionOptions{});
  if (op == "Conv") g = *scheduler::channels_last_activations(g);  // as the unit reads them
  const scheduler::Partition p = scheduler::partition_graph(g);
  for (const std::vector<int>& nodes : p.subgraphs)
    for (int n : nodes)
      if (g.nodes[static_cast<size_t>(n)].op == op) return ir::lower_subgraph(g, nodes).program;
  ADD_FAILURE() << "no " << op;
  return {};
}

using scheduler::DecisionKind;

TEST(Bf16TileProducts, TensorizeFitsWholeTilesOfABlock) {
  // y[34, 48] = a[34, 45] w[45, 48]: at the root the block is the whole output, 34 rows,
  // tiles of 2 (17 is prime); 40 rows would be 4 tiles of 10.
  const ir::TeProgram p = product_program(product_yaml("amx", "[34, 45]", 45, 48));
  ASSERT_EQ(p.stages.size(), 1u);
  scheduler::ScheduleState root(p);
  EXPECT_EQ(error_of(root, {DecisionKind::Tensorize, 0, -1, {0}}),
            "tensorize 0 [0]: the block's 34 rows make no tiles of 4 to 16 rows");
  scheduler::ScheduleState forty(product_program(product_yaml("amx", "[40, 45]", 45, 48)));
  EXPECT_EQ(error_of(forty, {DecisionKind::Tensorize, 0, -1, {0}}), "");
  EXPECT_EQ(error_of(root, {DecisionKind::Tensorize, 0, -1, {1}}),
            "tensorize 0 [1]: the only unit is 0 (the target's)");
  // Per tile of 32 x 16 (cached, the copy-out tiled): whole tiles, the last row tile shifted.
  scheduler::ScheduleState st(p);
  for (const scheduler::Decision& d :
       std::vector<scheduler::Decision>{{DecisionKind::CacheWrite, 0, -1, {}},
                                        {DecisionKind::Split, 1, -1, {0, 32}},
                                        {DecisionKind::Split, 1, -1, {2, 16}},
                                        {DecisionKind::Reorder, 1, -1, {0, 2, 1, 3}},
                                        {DecisionKind::ComputeAt, 0, 1, {1}}})
    ASSERT_EQ(error_of(st, d), "") << scheduler::decision_str(d);
  scheduler::ScheduleState split = st;
  ASSERT_EQ(error_of(split, {DecisionKind::Split, 0, -1, {0, 2}}), "");
  EXPECT_EQ(error_of(split, {DecisionKind::Tensorize, 0, -1, {0}}),
            "tensorize 0 [0]: the stage's loops are scheduled already");
  ASSERT_EQ(error_of(st, {DecisionKind::Tensorize, 0, -1, {0}}), "");
  EXPECT_EQ(error_of(st, {DecisionKind::Split, 0, -1, {0, 2}}),
            "split 0 [0, 2]: the stage is computed by the bf16 unit: its loops are final");
  EXPECT_EQ(error_of(st, {DecisionKind::Vectorize, 0, -1, {1}}),
            "vectorize 0 [1]: the stage is computed by the bf16 unit: its loops are final");
  EXPECT_EQ(error_of(st, {DecisionKind::Pack, 0, -1, {1}}),
            "pack 0 [1]: the stage's operands are laid out for the bf16 unit");

  // Blocks of 32 of 48 columns: the last starts at column 16, so the weight is packed in
  // rows of pairs over all its columns rather than in blocks of 16; 24 columns are no whole
  // tiles of 16.
  for (const int64_t columns : {32, 24}) {
    scheduler::ScheduleState wide(p);
    for (const scheduler::Decision& d :
         std::vector<scheduler::Decision>{{DecisionKind::CacheWrite, 0, -1, {}},
                                          {DecisionKind::Split, 1, -1, {1, columns}},
                                          {DecisionKind::ComputeAt, 0, 1, {1}}})
      ASSERT_EQ(error_of(wide, d), "") << scheduler::decision_str(d);
    EXPECT_EQ(error_of(wide, {DecisionKind::Tensorize, 0, -1, {0}}),
              columns == 32 ? ""
                            : "tensorize 0 [0]: the block's 24 columns are neither at most 16 "
                              "nor whole tiles of 16");
  }

  // A product of two activations has no constant to pack (--precision bf16 leaves such a
  // product float32; a model may compute one in bfloat16 itself).
  const std::string two = R"(
tlmc: 1
name: act
inputs:
  a: {shape: [16, 32], dtype: bfloat16}
  b: {shape: [32, 16], dtype: bfloat16}
nodes:
  - {op: MatMul, inputs: [a, b], outputs: [y]}
outputs: [y]
)";
  scheduler::ScheduleState acts(product_program(two));
  ASSERT_EQ(acts.stages.size(), 2u);  // the product, then its rounding to bfloat16
  EXPECT_EQ(error_of(acts, {DecisionKind::Tensorize, 0, -1, {0}}),
            "tensorize 0 [0]: the [k, j] operand is no constant only this stage reads");
}

// A convolution's window: the unit sums over its taps, reading the padded input whole at
// the root, which then stays there.
TEST(Bf16TileProducts, AWindowIsSummedOverItsTapsFromThePaddedInput) {
  const ir::TeProgram p = product_program(R"(
tlmc: 1
name: window
inputs:
  x: {shape: [1, 20, 9, 9]}
weights:
  w: {shape: [32, 20, 3, 3], init: {uniform: [-1, 1]}, seed: 40}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [y], attrs: {pads: [1, 1, 1, 1]}}
outputs: [y]
)",
                                          "Conv");
  // The padded input, then the convolution.
  ASSERT_EQ(p.stages.size(), 2u);
  scheduler::ScheduleState st(p);
  // 81 x 32 at the root: 9 rows of 9 positions, not each whole row.
  EXPECT_EQ(error_of(st, {DecisionKind::Tensorize, 1, -1, {0}}),
            "tensorize 1 [0]: the block spans several rows of positions but not each whole, or "
            "the other operand's rows do not run on across them");
  // Inlined, the padding is no tensor the unit can read.
  scheduler::ScheduleState inlined(p);
  ASSERT_EQ(error_of(inlined, {DecisionKind::Inline, 0, -1, {}}), "");
  EXPECT_EQ(error_of(inlined, {DecisionKind::Tensorize, 1, -1, {0}}),
            "tensorize 1 [0]: the product's operands are not bfloat16 tensors");
  // Per output row: 9 x 32, over 20 channels at each of 9 taps.
  for (const scheduler::Decision& d : std::vector<scheduler::Decision>{
           {DecisionKind::CacheWrite, 1, -1, {}}, {DecisionKind::ComputeAt, 1, 2, {1}}})
    ASSERT_EQ(error_of(st, d), "") << scheduler::decision_str(d);
  std::string why;
  const scheduler::TileOperands o = scheduler::tile_operands(st, 1, &why);
  ASSERT_EQ(why, "");
  EXPECT_EQ(o.m, 9);
  EXPECT_EQ(o.n, 32);
  EXPECT_EQ(o.k, 20);
  EXPECT_EQ(o.lda, 20);  // channels-last: a position's channels, then the next position's
  ASSERT_EQ(o.taps.size(), 2u);
  EXPECT_EQ(o.taps[0].a_stride, 11 * 20);  // kh: a row of the padded input
  EXPECT_EQ(o.taps[1].a_stride, 20);       // kw: a position
  EXPECT_EQ(o.taps[0].b_stride, 3);        // w[m, c, kh, kw]
  EXPECT_EQ(o.taps[1].b_stride, 1);
  EXPECT_FALSE(o.rows_run_on);  // the padded rows are wider than the output's
  // Taken, the padding may then not move into the row's loop.
  ASSERT_EQ(error_of(st, {DecisionKind::Tensorize, 1, -1, {0}}), "");
  EXPECT_EQ(error_of(st, {DecisionKind::ComputeAt, 0, 2, {1}}),
            "compute_at 0 2 [1]: the bf16 unit reads the stage whole at the root");
  EXPECT_EQ(error_of(st, {DecisionKind::Inline, 0, -1, {}}),
            "inline 0 []: the bf16 unit reads the stage whole at the root");
}

// Odd shapes: 37 rows (tiles of 16 and 32 shifted at the end), 5 rows (a tile of 5), a
// batch of 2 x 40; reductions of 96 (three steps), 45 (a step and a tail of 13), 20 (a tail
// alone), 33, 300 (AMX's parts of 256, then one step and a tail of 12); 128, 48, 7, 50
// (blocks shifted to end at 50) and 40 columns.
std::vector<std::string> models() {
  return {R"(
tlmc: 1
name: amx_a
inputs:
  a: {shape: [37, 96]}
weights:
  w: {shape: [96, 128], init: {uniform: [-1, 1]}, seed: 21}
  bias: {shape: [128], init: {uniform: [-1, 1]}, seed: 22}
nodes:
  - {op: MatMul, inputs: [a, w], outputs: [m]}
  - {op: Add, inputs: [m, bias], outputs: [s]}
  - {op: Relu, inputs: [s], outputs: [y]}
outputs: [y]
)",
          product_yaml("amx_b", "[5, 45]", 45, 48, 23),
          product_yaml("amx_c", "[2, 40, 20]", 20, 7, 24),
          product_yaml("amx_d", "[20, 33]", 33, 50, 25),
          product_yaml("amx_e", "[24, 300]", 300, 40, 26),
          // 1 x 1 convolutions, channels-last: positions are A's rows (several rows of
          // positions in a block), the weight [M, C, 1, 1] read along its rows; the second
          // reduces over 40 channels, no whole steps of 32, and is computed widened.
          R"(tlmc: 1
name: conv_a
inputs:
  x: {shape: [2, 64, 6, 8]}
weights:
  w: {shape: [48, 64, 1, 1], init: {uniform: [-1, 1]}, seed: 27}
  b: {shape: [48], init: {uniform: [-1, 1]}, seed: 28}
  v: {shape: [20, 48, 1, 1], init: {uniform: [-1, 1]}, seed: 29}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [c]}
  - {op: Relu, inputs: [c], outputs: [r]}
  - {op: Conv, inputs: [r, v], outputs: [y]}
outputs: [y]
)",
          R"(tlmc: 1
name: conv_b
inputs:
  x: {shape: [1, 40, 7, 7]}
weights:
  w: {shape: [32, 40, 1, 1], init: {uniform: [-1, 1]}, seed: 30}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [y]}
outputs: [y]
)",
          // Windows, summed over their taps: 3 x 3 over 20 channels (a tail alone) into 24
          // (no whole tiles of 16); stride 2 over 48 channels (a step and a tail of 16) on a
          // batch of 2 at odd sizes; dilation 2 then a 1 x 1 convolution of stride 2 (A's
          // rows two positions apart); rows of 28 positions (tiles of 14 rows).
          R"(tlmc: 1
name: conv_c
inputs:
  x: {shape: [1, 20, 9, 9]}
weights:
  w: {shape: [24, 20, 3, 3], init: {uniform: [-1, 1]}, seed: 41}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c], attrs: {pads: [1, 1, 1, 1]}}
  - {op: Relu, inputs: [c], outputs: [y]}
outputs: [y]
)",
          R"(tlmc: 1
name: conv_d
inputs:
  x: {shape: [2, 48, 13, 11]}
weights:
  w: {shape: [32, 48, 3, 3], init: {uniform: [-1, 1]}, seed: 42}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [y], attrs: {pads: [1, 1, 1, 1], strides: [2, 2]}}
outputs: [y]
)",
          R"(tlmc: 1
name: conv_e
inputs:
  x: {shape: [1, 32, 10, 19]}
weights:
  w: {shape: [16, 32, 3, 3], init: {uniform: [-1, 1]}, seed: 43}
  v: {shape: [20, 16, 1, 1], init: {uniform: [-1, 1]}, seed: 44}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [c], attrs: {pads: [2, 2, 2, 2], dilations: [2, 2]}}
  - {op: Conv, inputs: [c, v], outputs: [y], attrs: {strides: [2, 2]}}
outputs: [y]
)",
          R"(tlmc: 1
name: conv_f
inputs:
  x: {shape: [1, 16, 5, 28]}
weights:
  w: {shape: [32, 16, 3, 3], init: {uniform: [-1, 1]}, seed: 45}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [y], attrs: {pads: [1, 1, 1, 1]}}
outputs: [y]
)",
          // A stem: a window over 3 channels, its 7 columns folded into 21 channels (Pad,
          // Slices and a Concat: a kernel of their own), at a stride, uneven padding and
          // odd sizes.
          R"(tlmc: 1
name: conv_s
inputs:
  x: {shape: [1, 3, 19, 23]}
weights:
  w: {shape: [20, 3, 5, 7], init: {uniform: [-1, 1]}, seed: 49}
  b: {shape: [20], init: {uniform: [-1, 1]}, seed: 50}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [c], attrs: {strides: [2, 2], pads: [2, 3, 1, 2]}}
  - {op: Relu, inputs: [c], outputs: [y]}
outputs: [y]
)",
          // Depthwise convolutions reading bfloat16 (no product for the unit: loops over
          // float32, from a padded copy widened once), at stride 1 and 2.
          R"(tlmc: 1
name: conv_g
inputs:
  x: {shape: [1, 48, 7, 9]}
weights:
  d: {shape: [48, 1, 3, 3], init: {uniform: [-1, 1]}, seed: 47}
  s: {shape: [48, 1, 3, 3], init: {uniform: [-1, 1]}, seed: 48}
nodes:
  - {op: Relu, inputs: [x], outputs: [r]}
  - {op: Conv, inputs: [r, d], outputs: [a], attrs: {group: 48, pads: [1, 1, 1, 1]}}
  - {op: Conv, inputs: [a, s], outputs: [y], attrs: {group: 48, pads: [0, 1, 1, 0], strides: [2, 2]}}
outputs: [y]
)"};
}

// Every model, the default schedule and 12 drawn at random, on `target` (this CPU's).
void expect_random_schedules_match(const ir::Target& target) {
  TempDir dir;
  int tensorized = 0, schedules = 0, convolutions = 0, windows = 0;
  for (const std::string& yaml : models()) {
    const std::string path = dir.file("model.yaml");
    write_file(path, yaml);
    driver::CompileOptions o;
    o.model_path = path;
    o.target = target;
    o.bf16 = true;
    for (int64_t seed = -1; seed < 12; ++seed) {
      SCOPED_TRACE(yaml.substr(yaml.find("name: ") + 6, 5) + " schedule seed " +
                   std::to_string(seed) + " (-1: the default)");
      o.random_schedule_seed = seed;
      const driver::CompiledModel m = driver::compile_model(o);
      for (const codegen::KernelInfo& k : m.plan.kernels) {
        ++schedules;
        const bool unit = k.schedule.find("tensorize") != std::string::npos;
        tensorized += unit;
        convolutions += unit && yaml.find("op: Conv") != std::string::npos;
        windows += ir::loop_str(k.loops).find(" taps (B's ") != std::string::npos;
      }
      const driver::CheckResult r = driver::check_model(m, target);
      std::ostringstream report;
      driver::print_check(report, r);
      for (const codegen::KernelInfo& k : m.plan.kernels)
        report << "kernel " << k.loops.name << " schedule:\n" << k.schedule;
      EXPECT_TRUE(r.compiled_exactly) << report.str();
      EXPECT_TRUE(r.passed) << report.str();
    }
  }
  // The draws reach the AMX kernels (each product's default takes them where its block
  // allows), and not only them.
  EXPECT_GE(tensorized, 8) << "of " << schedules << " kernels";
  EXPECT_GE(convolutions, 2) << "1 x 1 convolutions by the unit, of " << schedules << " kernels";
  EXPECT_GE(windows, 4) << "windows summed over their taps by the unit, of " << schedules
                        << " kernels";
}

TEST(Bf16TileProducts, RandomSchedulesMatchTheReference) {
  const ir::Target host = ir::host_target();
  if (host.bf16 != ir::Bf16Unit::Amx) GTEST_SKIP() << "this CPU has no AMX";
  expect_random_schedules_match(host);
}

// The same schedules by vdpbf16ps (on a CPU with AMX too: its AVX512_BF16 alone).
TEST(Bf16TileProducts, Avx512Bf16RandomSchedulesMatchTheReference) {
  ir::Target host = ir::host_target();
  if (host.bf16 == ir::Bf16Unit::None) GTEST_SKIP() << "this CPU has no AVX512_BF16";
  host.bf16 = ir::Bf16Unit::Avx512Bf16;
  expect_random_schedules_match(host);
}

// --dump precision says how each kernel computes: the product by the unit where its block
// fits, widened with the reason where it does not (two activations: --precision bf16 leaves
// such a product float32, but a model may compute one in bfloat16 itself), float32
// elsewhere.
TEST(Bf16TileProducts, DumpPrecisionNamesTheUnitOrWhyNot) {
  TempDir dir;
  write_file(dir.file("model.yaml"), R"(
tlmc: 1
name: dumped
inputs:
  a: {shape: [32, 64]}
  b: {shape: [64, 16], dtype: bfloat16}
weights:
  w: {shape: [64, 64], init: {uniform: [-1, 1]}, seed: 31}
nodes:
  - {op: MatMul, inputs: [a, w], outputs: [h]}
  - {op: Relu, inputs: [h], outputs: [r]}
  - {op: Cast, inputs: [r], outputs: [r16], attrs: {to: 16}}
  - {op: MatMul, inputs: [r16, b], outputs: [y]}
outputs: [y]
)");
  for (const auto& [target, unit] : {std::pair<std::string, std::string>{"x86-64-amx", "AMX tiles"},
                                     {"x86-64-avx512-bf16", "vdpbf16ps"}}) {
    SCOPED_TRACE(target);
    const CommandResult r = run_command(
        std::string(TLMC_EXE) + " " + dir.file("model.yaml") + " --target " + target +
        " --precision bf16 -O0 --emit source -o " + dir.file("src") + " --dump precision");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("): h: bf16 by " + unit), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("y.f32: bf16 widened to float32 (the [k, j] operand is no constant "
                         "only this stage reads)"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("): float32"), std::string::npos) << r.out;  // a's Cast
  }
}

// Padded bfloat16 inputs are copied and widened by whole vectors of their channels,
// channels-last: a dense window's padded copy stays bfloat16 for the unit (a vector load and
// store for each 16 channels under one bounds test), a depthwise one's is widened into
// float32 (the same, or where the padding is read inline, a select between a widened vector
// and zeros); never element by element (tlmc_bf16_to_f32 of a loaded element).
TEST(Bf16TileProducts, PaddedInputsAreCopiedByVectors) {
  TempDir dir;
  for (const std::string& yaml : models()) {
    const std::string name = yaml.substr(yaml.find("name: ") + 6, 6);
    if (name != "conv_d" && name != "conv_g") continue;
    SCOPED_TRACE(name);
    write_file(dir.file(name + ".yaml"), yaml);
    const CommandResult r =
        run_command(std::string(TLMC_EXE) + " " + dir.file(name + ".yaml") +
                    " --target x86-64-amx --precision bf16 -O0 --activation-layout channels-last "
                    "--emit source -o " +
                    dir.file(name));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    const std::string c = read_file(dir.file(name + "/" + name + ".c"));
    EXPECT_NE(c.find("? tlmc_vloadbf16_16(&"), std::string::npos);
    EXPECT_EQ(c.find("tlmc_bf16_to_f32(b"), std::string::npos) << "an element-wise widening";
  }
}

TEST(Bf16TileProducts, LibrariesForEitherUnitCompileOnAnyHost) {
  TempDir dir;
  write_file(dir.file("model.yaml"), models()[1]);
  for (const auto& [target, instruction, unit] :
       {std::tuple<std::string, std::string, std::string>{"x86-64-amx", "_tile_dpbf16ps", "2"},
        {"x86-64-avx512-bf16", "_mm512_dpbf16_ps", "1"}}) {
    SCOPED_TRACE(target);
    const std::string base = std::string(TLMC_EXE) + " " + dir.file("model.yaml") + " --target " +
                             target + " --precision bf16 -O0";
    const CommandResult source = run_command(base + " --emit source -o " + dir.file("src_" + unit));
    ASSERT_EQ(source.exit_code, 0) << source.out;
    const std::string c = read_file(dir.file("src_" + unit + "/amx_b.c"));
    EXPECT_NE(c.find(instruction), std::string::npos);
    EXPECT_NE(c.find("bf16_ready(" + unit + ") != 0) return 3;"), std::string::npos);
    const CommandResult object = run_command(base + " --emit obj -o " + dir.file("amx.o"));
    EXPECT_EQ(object.exit_code, 0) << object.out;
  }
}

}  // namespace
}  // namespace tlmc::test
