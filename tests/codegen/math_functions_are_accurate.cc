// The math functions of generated code (codegen/math_functions.h) against double-precision
// libm, in units in the last place: every float for the vector functions of the host's
// widest target, every 61st float for the scalar functions of the plain-C target (no FMA:
// the most roundings). Compiled exactly as tlmc compiles a kernel (toolchain/cc.h). Also
// the special values: NaN, infinities, zeros, overflow and underflow.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "codegen/emit_kernel.h"
#include "codegen/math_functions.h"
#include "ir/target.h"
#include "support/test_support.h"
#include "toolchain/cc.h"

namespace tlmc::test {
namespace {

// Sweeps float bit patterns first, first + stride, ... (all of them, both signs) through
// FN (lanes wide, or scalar when LANES is 1) and compares with REF in double. Prints
// "max_ulp X at Y" and "special ok" or what failed.
const char* kHarness = R"(
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

static double ulp_error(float y, double r) {
  if (isnan(r)) return isnan(y) ? 0 : INFINITY;
  if (isnan(y)) return INFINITY; /* NaN where the reference is a number */
  if ((float)r == (float)INFINITY || (float)r == -(float)INFINITY || isinf(r))
    return y == (float)r ? 0 : INFINITY;
  const double diff = fabs((double)y - r);
  if (fabs(r) < FLT_MIN) return diff / 0x1p-149; /* subnormal result: absolute */
  int e;
  frexp(r, &e);
  return diff / ldexp(1.0, e - 24);
}

static float apply(float x) {
#if LANES == 1
  return FN(x);
#else
  VF v = tlmc_vsplat_arg(x);
  return FN(v)[0];
#endif
}

int main(void) {
  double worst = 0;
  float worst_x = 0;
  const uint64_t stride = STRIDE;
  float in[LANES], out[LANES];
  int k = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += stride) {
    const uint32_t bits = (uint32_t)b;
    memcpy(&in[k], &bits, 4);
    if (++k < LANES && b + stride < (1ull << 32)) continue;
#if LANES == 1
    out[0] = FN(in[0]);
#else
    VF v;
    memcpy(&v, in, sizeof v);
    v = FN(v);
    memcpy(out, &v, sizeof v);
#endif
    for (int i = 0; i < k; ++i) {
      if (!(in[i] >= LO && in[i] <= HI)) continue;
      const double e = ulp_error(out[i], REF((double)in[i]));
      if (e > worst) { worst = e; worst_x = in[i]; }
    }
    k = 0;
  }
  printf("max_ulp %.3f at %.9g\n", worst, worst_x);
  int bad = 0;
  const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, FLT_MAX, -FLT_MAX,
                            FLT_MIN, -FLT_MIN, 0x1p-149f, -0x1p-149f, 1e30f, -1e30f, 200.f, -200.f};
  for (unsigned i = 0; i < sizeof specials / sizeof specials[0]; ++i) {
    const float x = specials[i], y = apply(x);
    const double r = REF((double)x);
    if (ulp_error(y, r) > MAXULP) {
      printf("special %.9g: got %.9g, want %.9g\n", x, y, r);
      bad = 1;
    }
  }
  if (!bad) printf("special ok\n");
  return 0;
}
)";

struct MathCase {
  const char* name;  // tlmc_NAMEf, tlmc_vNAME<lanes>
  const char* ref;   // a C expression of x in double
  float lo, hi;      // the range tested for ulps (math_functions.h); specials always
};

const MathCase kCases[] = {
    {"exp", "(x < (double)-87.3365402f ? 0.0 : exp(x))", -3.4e38f, 3.4e38f},
    {"log", "log(x)", 0.0f, 3.4e38f},
    {"tanh", "tanh(x)", -3.4e38f, 3.4e38f},
    {"erf", "erf(x)", -3.4e38f, 3.4e38f},
    {"sigmoid", "(1.0 / (1.0 + exp(-x)))", -87.33f, 3.4e38f},
    {"rsqrt", "(1.0 / sqrt(x))", 0.0f, 3.4e38f},
};

// Compiles the harness for one function and target, runs it, returns its output. `stand_in`,
// when given, is the C source of a scalar function `stand_in` swept in the function's place.
std::string sweep(const MathCase& c, const ir::Target& target, int lanes, int stride,
                  const std::string& stand_in = "") {
  TempDir dir;
  const std::string fn = !stand_in.empty() ? "stand_in"
                         : lanes == 1      ? std::string("tlmc_") + c.name + "f"
                                           : "tlmc_v" + std::string(c.name) + std::to_string(lanes);
  const std::string vf = "tlmc_vf" + std::to_string(lanes);
  std::string src = "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n" +
                    codegen::kernel_preamble(target);
  if (lanes > 1)
    src +=
        "#define VF " + vf + "\n#define tlmc_vsplat_arg tlmc_vsplat" + std::to_string(lanes) + "\n";
  char defs[512];
  std::snprintf(defs, sizeof defs,
                "#define LANES %d\n#define FN %s\n#define REF(x) %s\n#define STRIDE %d\n"
                "#define LO ((float)%.9e)\n#define HI ((float)%.9e)\n#define MAXULP %g\n",
                lanes, fn.c_str(), c.ref, stride, c.lo, c.hi, codegen::kMathMaxUlp);
  write_file(dir.file("sweep.c"), src + stand_in + defs + kHarness);
  const std::vector<std::string> objs =
      toolchain::compile_objects(dir.path(), {"sweep.c"}, target, false);
  std::string log;
  EXPECT_EQ(toolchain::run_shell("cd " + dir.path() + " && " + toolchain::c_compiler() + " " +
                                     objs[0] + " -lm -o sweep && ./sweep",
                                 &log),
            0)
      << log;
  return log;
}

void expect_accurate(const std::string& out, const std::string& what) {
  double ulp = INFINITY;
  float at = 0;
  ASSERT_EQ(std::sscanf(out.c_str(), "max_ulp %lf at %f", &ulp, &at), 2) << out;
  std::printf("%s: %s", what.c_str(), out.c_str());  // the measured bound, in the test log
  EXPECT_LE(ulp, codegen::kMathMaxUlp) << what << " at x = " << at;
  EXPECT_NE(out.find("special ok"), std::string::npos) << what << ":\n" << out;
}

class MathFunction : public ::testing::TestWithParam<MathCase> {};

TEST_P(MathFunction, VectorFormIsWithinItsBoundOnEveryFloat) {
  const ir::Target host = ir::host_target();
  if (host.isa == ir::Isa::Generic) GTEST_SKIP() << "the host has no SIMD target";
  const int lanes = host.vector_lanes(4);
  expect_accurate(sweep(GetParam(), host, lanes, 1),
                  std::string(GetParam().name) + " x" + std::to_string(lanes));
}

TEST_P(MathFunction, ScalarFormWithoutFmaIsWithinItsBound) {
  expect_accurate(sweep(GetParam(), *ir::parse_target("x86-64"), 1, 61),
                  std::string(GetParam().name) + " scalar");
}

// The sweep fails a function that returns NaN where the reference is a number (a NaN error
// once compared false against every bound, and such a function passed).
TEST(MathSweep, ANaNWhereTheReferenceIsANumberFails) {
  const std::string out =
      sweep(kCases[0], *ir::parse_target("x86-64"), 1, 997,
            "static float stand_in(float x) { return x > 1 && x < 80 ? NAN : tlmc_expf(x); }\n");
  double ulp = 0;
  float at = 0;
  ASSERT_EQ(std::sscanf(out.c_str(), "max_ulp %lf at %f", &ulp, &at), 2) << out;
  EXPECT_TRUE(std::isinf(ulp)) << out;
  EXPECT_GT(at, 1.0f) << out;  // where exp(x) is a float: not an overflow's infinity
  EXPECT_LT(at, 80.0f) << out;
}

INSTANTIATE_TEST_SUITE_P(Codegen, MathFunction, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<MathCase>& i) {
                           return std::string(i.param.name);
                         });

}  // namespace
}  // namespace tlmc::test
