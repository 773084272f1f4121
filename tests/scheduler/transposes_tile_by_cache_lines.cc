// At -O0 a transpose (a stage whose innermost axis strides through an operand read along
// another of its axes) tiles both axes by a cache line of elements, so that the lines it
// reads stay in the L1 cache until used up; other element-wise stages keep the innermost axis
// in tiles of up to 256 and the others whole outside.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/target.h"
#include "scheduler/schedule_support.h"
#include "scheduler/sketch.h"

namespace tlmc::scheduler {
namespace {

using test::program_of;

ir::Target target(const char* name) {
  ir::Target t = *ir::parse_target(name);
  t.cores = 2;
  return t;
}

std::string transpose_yaml(const std::string& shape, const std::string& perm) {
  return "tlmc: 1\nname: t\ninputs:\n  x: {shape: [" + shape +
         "]}\nnodes:\n  - {op: Transpose, inputs: [x], outputs: [y], attrs: {perm: [" + perm +
         "]}}\n  - {op: Relu, inputs: [y], outputs: [z]}\noutputs: [z]\n";
}

// The -O0 schedule's split factors, in the order it splits the axes.
std::vector<int64_t> default_tiles(const std::string& yaml, const char* target_name) {
  std::vector<int64_t> tiles;
  for (const Decision& d : default_schedule(program_of(yaml), target(target_name)))
    if (d.kind == DecisionKind::Split) tiles.push_back(d.args.at(1));
  return tiles;
}

TEST(TransposeTiles, BothAxesTakeACacheLineOfElements) {
  // [1, 128, 12, 64] -> [1, 12, 64, 128] (attention's keys): read along the 64, stored along
  // the 128.
  EXPECT_EQ(default_tiles(transpose_yaml("1, 128, 12, 64", "0, 2, 3, 1"), "x86-64-avx512"),
            (std::vector<int64_t>{1, 16, 16}));
  // A line is 64 bytes whatever the vector width.
  EXPECT_EQ(default_tiles(transpose_yaml("1, 128, 12, 64", "0, 2, 3, 1"), "x86-64-avx2"),
            (std::vector<int64_t>{1, 16, 16}));
  // Extents no line divides: the largest divisor when it is at least half a line.
  EXPECT_EQ(default_tiles(transpose_yaml("100, 50", "1, 0"), "x86-64-avx512"),
            (std::vector<int64_t>{10, 10}));
  // NCHW -> NHWC of an image: read along W, three channels innermost.
  EXPECT_EQ(default_tiles(transpose_yaml("1, 3, 224, 224", "0, 2, 3, 1"), "x86-64-avx512"),
            (std::vector<int64_t>{1, 16, 3}));
}

TEST(TransposeTiles, OtherElementwiseStagesKeepTheirTiles) {
  // A broadcast operand read along the outer axis does not stride through the innermost.
  const std::string bias =
      "tlmc: 1\nname: b\ninputs:\n  x: {shape: [128, 768]}\n  c: {shape: [128, 1]}\n"
      "nodes:\n  - {op: Add, inputs: [x, c], outputs: [y]}\noutputs: [y]\n";
  EXPECT_EQ(default_tiles(bias, "x86-64-avx512"), (std::vector<int64_t>{1, 256}));
  // A permutation that keeps the innermost axis is a copy of rows.
  EXPECT_EQ(default_tiles(transpose_yaml("12, 128, 64", "1, 0, 2"), "x86-64-avx512"),
            (std::vector<int64_t>{1, 1, 64}));
}

}  // namespace
}  // namespace tlmc::scheduler
