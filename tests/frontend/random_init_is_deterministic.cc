// Random weight initialisation is our own splitmix64 + Box-Muller (docs/graph-format.md):
// the same seed gives the same bytes on every platform, the default seed is the FNV-1a
// hash of the weight's name, and the values follow the documented formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "frontend/yaml_reader.h"

namespace tlmc::frontend {
namespace {

ir::Graph read_weights(const std::string& weights, const std::string& outputs) {
  return read_yaml_text("tlmc: 1\nweights:\n" + weights + "nodes: []\noutputs: [" + outputs + "]\n",
                        "/nowhere/m.yaml");
}

const std::vector<uint8_t>& bytes_of(const ir::Graph& g, const std::string& name) {
  return *g.tensor(g.find_tensor(name)).data;
}

std::vector<float> floats_of(const ir::Graph& g, const std::string& name) {
  const std::vector<uint8_t>& b = bytes_of(g, name);
  std::vector<float> out(b.size() / 4);
  std::memcpy(out.data(), b.data(), b.size());
  return out;
}

std::vector<uint32_t> bits_of(const ir::Graph& g, const std::string& name) {
  const std::vector<uint8_t>& b = bytes_of(g, name);
  std::vector<uint32_t> out(b.size() / 4);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = b[4 * i] | b[4 * i + 1] << 8 | b[4 * i + 2] << 16 | uint32_t{b[4 * i + 3]} << 24;
  return out;
}

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

uint64_t checksum(const std::vector<uint8_t>& b) {
  return fnv1a64(std::string(b.begin(), b.end()));
}

// The documented generator, written independently.
struct SplitMix64 {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double unit() { return static_cast<double>(next() >> 11) / 9007199254740992.0; }
};

TEST(RandomInit, SameSeedGivesTheSameBytes) {
  const ir::Graph g = read_weights(R"(  a: {shape: [3, 5], init: {normal: 0.1}, seed: 7}
  b: {shape: [3, 5], init: {normal: 0.1}, seed: 7}
  c: {shape: [3, 5], init: {normal: 0.1}, seed: 8}
)",
                                   "a, b, c");
  EXPECT_EQ(bytes_of(g, "a"), bytes_of(g, "b"));
  EXPECT_NE(bytes_of(g, "a"), bytes_of(g, "c"));
}

TEST(RandomInit, DefaultSeedIsTheFnv1aHashOfTheName) {
  const std::string seed = std::to_string(fnv1a64("conv1.w"));  // above 2^63: any uint64 goes
  const ir::Graph g = read_weights(
      "  conv1.w: {shape: [8], init: {uniform: [-1, 1]}}\n"
      "  other: {shape: [8], init: {uniform: [-1, 1]}, seed: " +
          seed + "}\n",
      "conv1.w, other");
  EXPECT_EQ(bytes_of(g, "conv1.w"), bytes_of(g, "other"));
  EXPECT_EQ(fnv1a64("conv1.w"), 0x03617ca74fd0e769ULL);
}

TEST(RandomInit, ValuesArePinned) {
  const ir::Graph g = read_weights(R"(  u: {shape: [1000], init: {uniform: [-1, 1]}, seed: 1}
  n: {shape: [1000], init: {normal: 1}, seed: 1}
  h: {shape: [1000], dtype: float16, init: {normal: 1}, seed: 1}
)",
                                   "u, n, h");
  const std::vector<uint32_t> u = bits_of(g, "u");
  const std::vector<uint32_t> n = bits_of(g, "n");
  EXPECT_EQ((std::vector<uint32_t>{u[0], u[1], u[2], u[3]}),
            (std::vector<uint32_t>{0x3e08516f, 0x3efbae37, 0x3f712746, 0xbde3e797}));
  EXPECT_EQ((std::vector<uint32_t>{n[0], n[1], n[2], n[3]}),
            (std::vector<uint32_t>{0xbd0c5be4, 0xc020011b, 0x3db3a7d6, 0xc001bc94}));
  EXPECT_EQ(checksum(bytes_of(g, "u")), 0x92a57822ee718cabULL);
  EXPECT_EQ(checksum(bytes_of(g, "n")), 0x8335137c54aacdbbULL);
  EXPECT_EQ(checksum(bytes_of(g, "h")), 0x6d8f1cc7c17a0f89ULL);
}

TEST(RandomInit, UniformFollowsTheDocumentedFormula) {
  const ir::Graph g =
      read_weights("  u: {shape: [5000], init: {uniform: [-0.5, 2]}, seed: 3}\n", "u");
  const std::vector<float> u = floats_of(g, "u");
  SplitMix64 rng{3};
  for (float v : u) {
    const double want = -0.5 + 2.5 * rng.unit();
    ASSERT_NEAR(v, want, 1e-6);
    ASSERT_GE(v, -0.5f);
    ASSERT_LE(v, 2.0f);
  }
}

TEST(RandomInit, NormalFollowsTheDocumentedFormula) {
  const ir::Graph g = read_weights("  n: {shape: [20000], init: {normal: 0.5}, seed: 11}\n", "n");
  const std::vector<float> n = floats_of(g, "n");
  SplitMix64 rng{11};
  double sum = 0, sum2 = 0;
  for (float v : n) {
    const double u1 = 1.0 - rng.unit();
    const double u2 = rng.unit();
    const double want = 0.5 * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    ASSERT_NEAR(v, want, 1e-6 * (1 + std::fabs(want)));
    sum += v;
    sum2 += static_cast<double>(v) * v;
  }
  const double mean = sum / n.size();
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(sum2 / n.size() - mean * mean), 0.5, 0.01);
}

}  // namespace
}  // namespace tlmc::frontend
