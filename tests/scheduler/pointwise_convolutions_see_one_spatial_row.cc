// Pointwise convolutions in the model's layout and their elementwise epilogue are lowered
// with the spatial dimensions merged into one row; a window, a stride, an operand that
// broadcasts along one spatial dimension only, or channels-last keep the shapes as they are.
#include <gtest/gtest.h>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "ir/te.h"
#include "scheduler/lowering_choices.h"
#include "scheduler/partition.h"

namespace tlmc::scheduler {
namespace {

struct Lowered {
  ir::LoweringChoices choices;
  ir::TeProgram program;
};

// The first subgraph of a one-Conv model whose other operand (input `other`) is added after
// a Relu; `attrs` are the Conv's.
Lowered lower(const std::string& kernel, const std::string& attrs, const std::string& other) {
  const ir::Graph g = frontend::read_yaml_text(R"(tlmc: 1
name: g
inputs:
  x: {shape: [2, 6, 5, 7]}
  other: {shape: )" + other + R"(}
weights:
  w: {shape: [8, 6, )" + kernel + R"(], init: {uniform: [-1, 1]}}
  b: {shape: [8], init: {uniform: [-1, 1]}}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [c], attrs: )" +
                                                   attrs + R"(}
  - {op: Relu, inputs: [c], outputs: [r]}
  - {op: Add, inputs: [r, other], outputs: [y]}
outputs: [y]
)",
                                               "g.yaml");
  const Partition p = partition_graph(g);
  const std::vector<int>& nodes = p.subgraphs.at(0);
  Lowered out{lowering_choices(g, nodes, *ir::parse_target("x86-64-avx512")), {}};
  out.program = ir::lower_subgraph(g, nodes, out.choices).program;
  return out;
}

ir::Shape shape_of(const ir::TeProgram& p, const std::string& name) {
  for (const ir::TeTensor& t : p.tensors)
    if (t.name == name) return t.shape;
  ADD_FAILURE() << "no tensor " << name;
  return {};
}

TEST(PointwiseConvolutions, SpatialDimensionsMergeIntoOneRow) {
  const Lowered l = lower("1, 1", "{}", "[8, 1, 1]");
  EXPECT_TRUE(l.choices.flat_spatial);
  EXPECT_EQ(shape_of(l.program, "x"), (ir::Shape{2, 6, 1, 35}));
  EXPECT_EQ(shape_of(l.program, "y"), (ir::Shape{2, 8, 1, 35}));
  EXPECT_EQ(shape_of(l.program, "w"), (ir::Shape{8, 6, 1, 1}));
  EXPECT_EQ(shape_of(l.program, "other"), (ir::Shape{8, 1, 1}));  // broadcast alike
}

TEST(PointwiseConvolutions, OperandsOverTheWholeImageMergeToo) {
  EXPECT_EQ(shape_of(lower("1, 1", "{}", "[5, 7]").program, "other"), (ir::Shape{1, 35}));
  EXPECT_EQ(shape_of(lower("1, 1", "{}", "[2, 8, 5, 7]").program, "other"),
            (ir::Shape{2, 8, 1, 35}));
}

TEST(PointwiseConvolutions, OtherSubgraphsKeepTheirShapes) {
  // A window, a stride, padding, an operand along one spatial dimension only.
  for (const Lowered& l : {lower("3, 3", "{pads: [1, 1, 1, 1]}", "[8, 1, 1]"),
                           lower("1, 1", "{strides: [1, 2]}", "[8, 1, 1]"),
                           lower("1, 1", "{pads: [0, 0, 0, 0], strides: [1, 1]}", "[7]")}) {
    EXPECT_FALSE(l.choices.flat_spatial);
    EXPECT_EQ(shape_of(l.program, "x"), (ir::Shape{2, 6, 5, 7}));
  }
  // Explicit attributes that change nothing still merge.
  EXPECT_TRUE(lower("1, 1", "{pads: [0, 0, 0, 0], strides: [1, 1]}", "[1]").choices.flat_spatial);
}

}  // namespace
}  // namespace tlmc::scheduler
