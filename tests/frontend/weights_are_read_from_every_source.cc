// Each weight source (init zeros/ones, data, file with offset) gives the little-endian
// bytes of the declared dtype.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "frontend/yaml_reader.h"
#include "support/test_support.h"

namespace tlmc::frontend {
namespace {

// A model whose only content is `weights`, all listed as outputs.
ir::Graph read_weights(const std::string& weights, const std::vector<std::string>& names,
                       const std::string& path = "/nowhere/m.yaml") {
  std::string outputs;
  for (const std::string& n : names) outputs += (outputs.empty() ? "" : ", ") + n;
  return read_yaml_text("tlmc: 1\nweights:\n" + weights + "nodes: []\noutputs: [" + outputs + "]\n",
                        path);
}

std::vector<uint8_t> bytes_of(const ir::Graph& g, const std::string& name) {
  return *g.tensor(g.find_tensor(name)).data;
}

std::vector<uint8_t> le(std::initializer_list<uint64_t> values, size_t size) {
  std::vector<uint8_t> out;
  for (uint64_t v : values)
    for (size_t i = 0; i < size; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
  return out;
}

uint32_t bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

TEST(Weights, ZerosAndOnesInEveryDtype) {
  const ir::Graph g = read_weights(R"(  z: {shape: [2], init: zeros}
  f32: {shape: [2], init: ones}
  f16: {shape: [2], dtype: float16, init: ones}
  bf16: {shape: [2], dtype: bfloat16, init: ones}
  i64: {shape: [2], dtype: int64, init: ones}
  i8: {shape: [2], dtype: int8, init: ones}
  b: {shape: [2], dtype: bool, init: ones}
  empty: {shape: [0, 3], init: ones}
)",
                                   {"z", "f32", "f16", "bf16", "i64", "i8", "b", "empty"});
  EXPECT_EQ(bytes_of(g, "z"), le({0, 0}, 4));
  EXPECT_EQ(bytes_of(g, "f32"), le({0x3f800000, 0x3f800000}, 4));
  EXPECT_EQ(bytes_of(g, "f16"), le({0x3c00, 0x3c00}, 2));
  EXPECT_EQ(bytes_of(g, "bf16"), le({0x3f80, 0x3f80}, 2));
  EXPECT_EQ(bytes_of(g, "i64"), le({1, 1}, 8));
  EXPECT_EQ(bytes_of(g, "i8"), le({1, 1}, 1));
  EXPECT_EQ(bytes_of(g, "b"), le({1, 1}, 1));
  EXPECT_TRUE(bytes_of(g, "empty").empty());
  EXPECT_EQ(g.type(g.find_tensor("i64")).dtype, ir::DType::Int64);
}

TEST(Weights, DataIsConvertedToTheDtype) {
  const ir::Graph g = read_weights(R"(  f32: {shape: [2, 2], data: [1.5, -2, 1e-3, .inf]}
  f16: {shape: [4], dtype: float16, data: [1, -0.5, 65504, 1e-7]}
  bf16: {shape: [2], dtype: bfloat16, data: [1, 3.0e38]}
  i64: {shape: [3], dtype: int64, data: [-9223372036854775808, 9223372036854775807, 0x10]}
  i32: {shape: [2], dtype: int32, data: [-2147483648, 7]}
  i8: {shape: [2], dtype: int8, data: [-128, 127]}
  u8: {shape: [2], dtype: uint8, data: [0, 255]}
  b: {shape: [4], dtype: bool, data: [true, false, 1, 0]}
  s: {shape: [], data: [42]}
)",
                                   {"f32", "f16", "bf16", "i64", "i32", "i8", "u8", "b", "s"});
  EXPECT_EQ(bytes_of(g, "f32"), le({bits(1.5f), bits(-2.0f), bits(1e-3f), 0x7f800000}, 4));
  // 1e-7 is a float16 subnormal: 2^-24 * 1.68 rounds to 2 * 2^-24.
  EXPECT_EQ(bytes_of(g, "f16"), le({0x3c00, 0xb800, 0x7bff, 0x0002}, 2));
  EXPECT_EQ(bytes_of(g, "bf16"), le({0x3f80, 0x7f62}, 2));
  EXPECT_EQ(bytes_of(g, "i64"), le({0x8000000000000000ULL, 0x7fffffffffffffffULL, 16}, 8));
  EXPECT_EQ(bytes_of(g, "i32"), le({0x80000000u, 7}, 4));
  EXPECT_EQ(bytes_of(g, "i8"), le({0x80, 0x7f}, 1));
  EXPECT_EQ(bytes_of(g, "u8"), le({0, 255}, 1));
  EXPECT_EQ(bytes_of(g, "b"), le({1, 0, 1, 0}, 1));
  EXPECT_EQ(bytes_of(g, "s"), le({bits(42.0f)}, 4));
  EXPECT_EQ(ir::weight_values(g.tensor(g.find_tensor("f32")))[0], 1.5);
}

TEST(Weights, FileIsReadFromTheModelsFolderAtItsOffset) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("params"));
  std::string blob;
  for (int i = 0; i < 64; ++i) blob.push_back(static_cast<char>(i));
  test::write_file(dir.file("params/all.bin"), blob);
  const ir::Graph g = read_weights(R"(  a: {shape: [2], file: params/all.bin}
  b: {shape: [3], dtype: uint8, file: params/all.bin, offset: 5}
  c: {shape: [1], dtype: int64, file: params/all.bin, offset: 56}
)",
                                   {"a", "b", "c"}, dir.file("m.yaml"));
  EXPECT_EQ(bytes_of(g, "a"), (std::vector<uint8_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(bytes_of(g, "b"), (std::vector<uint8_t>{5, 6, 7}));
  EXPECT_EQ(bytes_of(g, "c"), (std::vector<uint8_t>{56, 57, 58, 59, 60, 61, 62, 63}));
}

TEST(Weights, FileEndingExactlyAtTheWeightIsEnough) {
  test::TempDir dir;
  test::write_file(dir.file("w.bin"), std::string(12, '\x01'));
  const ir::Graph g =
      read_weights("  w: {shape: [2], file: w.bin, offset: 4}\n", {"w"}, dir.file("m.yaml"));
  EXPECT_EQ(bytes_of(g, "w"), std::vector<uint8_t>(8, 1));
}

}  // namespace
}  // namespace tlmc::frontend
