// Shape inference of the comparison, logical, Cast and Where operators and of the shape and
// indexing operators rejects what does not fit, with exact messages naming the node.
#include <gtest/gtest.h>

#include <limits>
#include <tuple>

#include "reference/graph_builder.h"

namespace tlmc::test {
namespace {

// One node `op` named n over graph inputs of the given types, plus int64 weights.
struct Case {
  std::vector<std::tuple<std::string, ir::Shape, ir::DType>> inputs = {};
  std::vector<std::pair<std::string, std::vector<int64_t>>> int_weights = {};  // 1-D
  std::map<std::string, ir::AttrValue> attrs = {};
};

std::string error_of(const std::string& op, const Case& c, const std::vector<std::string>& ins,
                     const std::vector<std::string>& outs = {"out"}) {
  GraphBuilder b;
  for (const auto& [name, shape, dtype] : c.inputs) b.input(name, shape, dtype);
  for (const auto& [name, values] : c.int_weights)
    b.weight_i64(name, {static_cast<int64_t>(values.size())}, values);
  b.node(op, ins, outs, c.attrs, "n");
  for (const std::string& o : outs)
    if (!o.empty()) b.output(o);
  return b.build_error();
}

constexpr ir::DType F32 = ir::DType::Float32;
constexpr ir::DType I64 = ir::DType::Int64;
constexpr ir::DType Bool = ir::DType::Bool;

TEST(ShapeErrors, ArithmeticNeedsOneNumericDtype) {
  EXPECT_EQ(error_of("Add", {{{"a", {2}, I64}, {"b", {2}, F32}}}, {"a", "b"}),
            "Add 'n' input 1 has dtype float32 but input 0 has dtype int64");
  EXPECT_EQ(error_of("Mul", {{{"a", {2}, Bool}, {"b", {2}, Bool}}}, {"a", "b"}),
            "Mul 'n' does not support input dtype bool (supported: float32, int32, int64)");
  EXPECT_EQ(error_of("Pow", {{{"a", {2}, I64}, {"b", {2}, I64}}}, {"a", "b"}),
            "Pow 'n' does not support input dtype int64 (supported: float32)");
  EXPECT_EQ(error_of("Max", {{{"a", {2}, F32}, {"b", {3}, F32}, {"c", {2}, F32}}}, {"a", "c", "b"}),
            "Max 'n' cannot broadcast [2] with [3]");
  EXPECT_EQ(error_of("Log", {{{"a", {2}, I64}}}, {"a"}),
            "Log 'n' does not support input dtype int64 (supported: float32)");
  EXPECT_EQ(error_of("Neg", {{{"a", {2}, Bool}}}, {"a"}),
            "Neg 'n' does not support input dtype bool (supported: float32, int32, int64)");
}

TEST(ShapeErrors, ComparisonsAndLogicNeedTheirDtypes) {
  EXPECT_EQ(error_of("Less", {{{"a", {2}, Bool}, {"b", {2}, Bool}}}, {"a", "b"}),
            "Less 'n' does not support input dtype bool (supported: float32, int32, int64)");
  EXPECT_EQ(error_of("Equal", {{{"a", {2}, Bool}, {"b", {2}, I64}}}, {"a", "b"}),
            "Equal 'n' input 1 has dtype int64 but input 0 has dtype bool");
  EXPECT_EQ(error_of("And", {{{"a", {2}, Bool}, {"b", {2}, F32}}}, {"a", "b"}),
            "And 'n' does not support input dtype float32 (supported: bool)");
  EXPECT_EQ(error_of("Not", {{{"a", {2}, I64}}}, {"a"}),
            "Not 'n' does not support input dtype int64 (supported: bool)");
  EXPECT_EQ(error_of("Greater", {{{"a", {2, 3}, F32}, {"b", {2}, F32}}}, {"a", "b"}),
            "Greater 'n' cannot broadcast [2, 3] with [2]");
}

TEST(ShapeErrors, WhereNeedsABoolConditionAndOneValueDtype) {
  EXPECT_EQ(
      error_of("Where", {{{"c", {2}, F32}, {"x", {2}, F32}, {"y", {2}, F32}}}, {"c", "x", "y"}),
      "Where 'n' does not support condition dtype float32 (supported: bool)");
  EXPECT_EQ(
      error_of("Where", {{{"c", {2}, Bool}, {"x", {2}, F32}, {"y", {2}, I64}}}, {"c", "x", "y"}),
      "Where 'n' input 2 has dtype int64 but input 1 has dtype float32");
  EXPECT_EQ(error_of("Where", {{{"c", {4}, Bool}, {"x", {2, 1}, F32}, {"y", {3, 1}, F32}}},
                     {"c", "x", "y"}),
            "Where 'n' cannot broadcast [2, 4] with [3, 1]");
}

TEST(ShapeErrors, CastTargets) {
  EXPECT_EQ(error_of("Cast", {{{"x", {2}, F32}}, {}, {{"to", attr_int(4)}}}, {"x"}),
            "Cast 'n' has to 4, an ONNX element type tlmc does not convert to (supported: 1 "
            "(float32), 2 (uint8), 3 (int8), 6 (int32), 7 (int64), 9 (bool), 10 (float16), 11 "
            "(float64), 16 (bfloat16))");
  EXPECT_EQ(error_of("Cast", {{{"x", {2}, F32}}}, {"x"}),
            "Cast 'n' needs the attribute 'to' (an integer)");
  EXPECT_EQ(error_of("Cast", {{{"x", {2}, ir::DType::Float16}}, {}, {{"to", attr_int(16)}}}, {"x"}),
            "");
}

TEST(ShapeErrors, UnsqueezeAndSqueezeAxes) {
  EXPECT_EQ(error_of("Unsqueeze", {{{"x", {2, 3}, F32}, {"a", {1}, I64}}}, {"x", "a"}),
            "Unsqueeze 'n' needs its axes 'a' to be a constant weight");
  EXPECT_EQ(error_of("Unsqueeze", {{{"x", {2, 3}, F32}}, {{"a", {3}}}}, {"x", "a"}),
            "Unsqueeze 'n' has axis 3 out of range for an output of rank 3 (input of shape [2, "
            "3])");
  EXPECT_EQ(error_of("Unsqueeze", {{{"x", {2, 3}, F32}}, {{"a", {1, -3}}}}, {"x", "a"}),
            "Unsqueeze 'n' has axes [1, -3] naming axis 1 twice");
  EXPECT_EQ(error_of("Squeeze", {{{"x", {1, 3}, F32}}, {{"a", {1}}}}, {"x", "a"}),
            "Squeeze 'n' cannot squeeze axis 1 of extent 3 (input of shape [1, 3])");
  EXPECT_EQ(error_of("Squeeze", {{{"x", {1, 3}, F32}}, {{"a", {2}}}}, {"x", "a"}),
            "Squeeze 'n' has axis 2 out of range for input of shape [1, 3]");
  GraphBuilder b;
  b.input("x", {1, 3});
  b.weight_i32("a", {1}, {0});
  b.node("Squeeze", {"x", "a"}, {"y"}, {}, "n");
  b.output("y");
  EXPECT_EQ(b.build_error(), "Squeeze 'n' does not support axes dtype int32 (supported: int64)");
}

TEST(ShapeErrors, ShapesGivenAsData) {
  EXPECT_EQ(error_of("ConstantOfShape", {{}, {{"s", {2, -1}}}}, {"s"}),
            "ConstantOfShape 'n' has invalid dimension -1 in its shape [2, -1]");
  EXPECT_EQ(
      error_of("ConstantOfShape", {{}, {{"s", {2}}}, {{"dtype", attr_string("float64")}}}, {"s"}),
      "ConstantOfShape 'n' has dtype 'float64' (supported: float32, int32, int64, int8, "
      "uint8, bool)");
  EXPECT_EQ(error_of("ConstantOfShape", {{{"s", {2}, I64}}}, {"s"}),
            "ConstantOfShape 'n' needs its shape 's' to be a constant weight");
  EXPECT_EQ(error_of("Expand", {{{"x", {3, 2}, F32}}, {{"s", {4}}}}, {"x", "s"}),
            "Expand 'n' cannot broadcast input of shape [3, 2] with shape [4]");
  EXPECT_EQ(error_of("Tile", {{{"x", {3, 2}, F32}}, {{"r", {2}}}}, {"x", "r"}),
            "Tile 'n' has repeats [2] of length 1, expected 2 (one per axis of input [3, 2])");
}

// Regression: integers read from weights were not bounded as attributes are, so a shape
// computed from them wrapped around: Tile of a [3] tensor by 6148914691236517207 compiled as
// float32[5] and passed --check; Range with limit - start past int64 the same.
TEST(ShapeErrors, ShapesComputedFromDataNeverWrapAround) {
  constexpr int64_t kWraps = 6148914691236517207;  // 3 times it is 5 modulo 2^64
  EXPECT_EQ(error_of("Tile", {{{"x", {3}, F32}}, {{"r", {kWraps}}}}, {"x", "r"}),
            "Tile 'n' has the value 6148914691236517207 in its repeats 'r', beyond tlmc's limit "
            "of +-(2^31 - 1)");
  EXPECT_EQ(error_of("Tile", {{{"x", {3}, F32}}, {{"r", {int64_t{1} << 30}}}}, {"x", "r"}),
            "tensor 'out' of shape [3221225472] is beyond tlmc's limits: its axis 0 is "
            "3221225472, beyond the largest extent tlmc compiles (2^31 - 1)");
  EXPECT_EQ(error_of("Expand", {{{"x", {1}, F32}}, {{"s", {int64_t{1} << 40}}}}, {"x", "s"}),
            "Expand 'n' has the value 1099511627776 in its shape 's', beyond tlmc's limit of "
            "+-(2^31 - 1)");
  EXPECT_EQ(error_of("ConstantOfShape", {{}, {{"s", {-(int64_t{1} << 62)}}}}, {"s"}),
            "ConstantOfShape 'n' has the value -4611686018427387904 in its shape 's', beyond "
            "tlmc's limit of +-(2^31 - 1)");
  // Three axes of 2^21 each: 2^63 elements, which a product of int64 wraps to a negative.
  EXPECT_EQ(
      error_of("Reshape", {{{"x", {8}, F32}}, {{"s", {1 << 21, 1 << 21, 1 << 21}}}}, {"x", "s"}),
      "Reshape 'n' has the shape [2097152, 2097152, 2097152], beyond tlmc's limits: it "
      "has more elements than the largest tensor tlmc compiles (2^32)");
  EXPECT_EQ(
      error_of(
          "Slice",
          {{{"x", {4}, F32}},
           {{"b", {0}}, {"e", {4}}, {"a", {0}}, {"st", {std::numeric_limits<int64_t>::min()}}}},
          {"x", "b", "e", "a", "st"}),
      "Slice 'n' has the value -9223372036854775808 in its steps 'st', beyond tlmc's limit "
      "of +-(2^31 - 1)");
  // Starts and ends are clamped to the axis, as ONNX says: INT64_MAX means "to the end".
  GraphBuilder s;
  s.input("x", {4}, F32);
  s.weight_i64("b", {1}, {std::numeric_limits<int64_t>::min()});
  s.weight_i64("e", {1}, {std::numeric_limits<int64_t>::max()});
  s.node("Slice", {"x", "b", "e"}, {"y"}, {}, "n");
  s.output("y");
  EXPECT_EQ(s.build().type(s.build().find_tensor("y")).shape, ir::Shape({4}));

  const int64_t lowest = std::numeric_limits<int64_t>::min();
  const int64_t highest = std::numeric_limits<int64_t>::max();
  for (const auto& [start, limit, delta, message] :
       std::vector<std::tuple<int64_t, int64_t, int64_t, std::string>>{
           {lowest, highest, 1,
            "Range 'n' would produce 18446744073709551615 elements, beyond the largest extent "
            "tlmc compiles (2^31 - 1)"},
           {highest, lowest, -3,
            "Range 'n' would produce 6148914691236517205 elements, beyond the largest extent "
            "tlmc compiles (2^31 - 1)"},
           {-(int64_t{1} << 62), int64_t{1} << 62, int64_t{1} << 30,
            "Range 'n' would produce 8589934592 elements, beyond the largest extent tlmc "
            "compiles (2^31 - 1)"}}) {
    GraphBuilder r;
    r.weight_i64("start", {}, {start});
    r.weight_i64("limit", {}, {limit});
    r.weight_i64("delta", {}, {delta});
    r.node("Range", {"start", "limit", "delta"}, {"y"}, {}, "n");
    r.output("y");
    EXPECT_EQ(r.build_error(), message);
  }
  GraphBuilder fine;  // the far ends of int64, a few elements apart
  fine.weight_i64("start", {}, {highest - 5});
  fine.weight_i64("limit", {}, {highest});
  fine.weight_i64("delta", {}, {2});
  fine.node("Range", {"start", "limit", "delta"}, {"y"}, {}, "n");
  fine.output("y");
  const ir::Graph g = fine.build();
  EXPECT_EQ(g.type(g.find_tensor("y")).shape, ir::Shape({3}));
}

TEST(ShapeErrors, RangeNeedsConstantScalars) {
  GraphBuilder b;
  b.weight_i64("start", {}, {0});
  b.weight_i64("limit", {2}, {4, 5});
  b.weight_i64("one", {}, {1});
  b.node("Range", {"start", "limit", "one"}, {"y"}, {}, "n");
  b.output("y");
  EXPECT_EQ(b.build_error(), "Range 'n' needs its limit 'limit' to be a scalar, got shape [2]");
  GraphBuilder d;
  d.weight_i64("start", {}, {0});
  d.weight_i64("zero", {}, {0});
  d.node("Range", {"start", "start", "zero"}, {"y"}, {}, "n");
  d.output("y");
  EXPECT_EQ(d.build_error(), "Range 'n' has delta 0");
  GraphBuilder e;
  e.weight_i64("start", {}, {0});
  e.weight("fone", {}, {1});
  e.node("Range", {"start", "start", "fone"}, {"y"}, {}, "n");
  e.output("y");
  EXPECT_EQ(e.build_error(), "Range 'n' input 2 has dtype float32 but input 0 has dtype int64");
}

TEST(ShapeErrors, SliceStartsEndsAxesAndSteps) {
  const Case x = {
      {{"x", {4, 5}, F32}},
      {{"s1", {0}}, {"s2", {0, 1}}, {"e2", {3, 3}}, {"a2", {1, -1}}, {"a3", {2}}, {"z", {0}}}};
  EXPECT_EQ(error_of("Slice", x, {"x", "s1", "e2"}),
            "Slice 'n' has starts [0] and ends [3, 3] of different lengths");
  EXPECT_EQ(error_of("Slice", x, {"x", "s2", "e2", "a2"}),
            "Slice 'n' has axes [1, -1] naming axis 1 twice");
  EXPECT_EQ(error_of("Slice", x, {"x", "s2", "e2", "a3"}),
            "Slice 'n' has axes [2] of length 1 for 2 starts");
  EXPECT_EQ(error_of("Slice", x, {"x", "s1", "s1", "a3"}),
            "Slice 'n' has axis 2 out of range for input of shape [4, 5]");
  EXPECT_EQ(error_of("Slice", x, {"x", "s1", "s1", "", "z"}), "Slice 'n' has step 0 on axis 0");
}

TEST(ShapeErrors, SplitParts) {
  const Case x = {
      {{"x", {2, 7}, F32}}, {{"parts", {3, 3}}, {"two", {3, 4}}}, {{"axis", attr_int(1)}}};
  EXPECT_EQ(error_of("Split", x, {"x"}, {"a", "b", "c"}),
            "Split 'n' cannot split axis 1 of extent 7 into 3 equal parts");
  EXPECT_EQ(error_of("Split", x, {"x", "parts"}, {"a", "b"}),
            "Split 'n' has split [3, 3] summing to 6, but axis 1 has extent 7");
  EXPECT_EQ(error_of("Split", x, {"x", "two"}, {"a", "b", "c"}),
            "Split 'n' has split [3, 4] of 2 parts for 3 outputs");
  Case far = x;
  far.attrs = {{"axis", attr_int(-3)}};
  EXPECT_EQ(error_of("Split", far, {"x"}, {"a"}),
            "Split 'n' has axis -3 out of range for input of shape [2, 7]");
}

TEST(ShapeErrors, PadModesAndPads) {
  const Case x = {
      {{"x", {2, 3}, F32}, {"i", {2, 3}, I64}},
      {{"short", {1, 1}}, {"wide", {0, 3, 0, 0}}, {"cut", {0, -2, 0, -2}}, {"ok", {0, 1, 0, 1}}}};
  Case wrap = x;
  wrap.attrs = {{"mode", attr_string("wrap")}};
  EXPECT_EQ(error_of("Pad", wrap, {"x", "ok"}),
            "Pad 'n' has mode 'wrap' (expected constant, reflect or edge)");
  EXPECT_EQ(error_of("Pad", x, {"x", "short"}),
            "Pad 'n' has pads [1, 1] of length 2, expected 4 (begin and end of each axis of input "
            "[2, 3])");
  EXPECT_EQ(error_of("Pad", x, {"x", "cut"}),
            "Pad 'n' has pads [0, -2, 0, -2] that remove more than the 3 elements of axis 1");
  Case reflect = x;
  reflect.attrs = {{"mode", attr_string("reflect")}};
  EXPECT_EQ(error_of("Pad", reflect, {"x", "wide"}),
            "Pad 'n' has pads [0, 3, 0, 0] too wide for mode 'reflect': axis 1 of extent 3 can be "
            "padded by at most 2");
  GraphBuilder b;
  b.input("x", {2, 3});
  b.weight_i64("pads", {4}, {0, 1, 0, 1});
  b.weight_i64("value", {}, {7});
  b.node("Pad", {"x", "pads", "value"}, {"y"}, {}, "n");
  b.output("y");
  EXPECT_EQ(b.build_error(), "Pad 'n' has constant_value of dtype int64 for data of dtype float32");
}

// ir::verify_graph alone does not compute shapes: a Reshape's shape must then be a weight.
// (frontend::verify_computing_shapes, which the readers use, computes it.)
TEST(ShapeErrors, ComputedShapesNeedTheFrontend) {
  GraphBuilder b;
  b.input("x", {2, 3});
  b.node("Shape", {"x"}, {"s"});
  b.node("Reshape", {"x", "s"}, {"y"}, {}, "r");
  b.output("y");
  EXPECT_EQ(b.build_error(), "Reshape 'r' needs its shape 's' to be a constant weight");
}

}  // namespace
}  // namespace tlmc::test
