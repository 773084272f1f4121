// The math functions of generated code (codegen/math_functions.h) against double-precision
// libm, in units in the last place, over every float: every form a kernel can call in one
// pass, with the reference computed once per float. The forms are the vector functions of
// every width of the host's target (16, 8 and 4 lanes on AVX-512) and its scalar functions
// (compiled with FMA where the host has it), over every float, and the scalar functions of
// the plain-C target (no FMA: the most roundings) over one float in 8, each compiled
// exactly as tlmc compiles a kernel (toolchain/cc.h). pow, of two floats, is tested on random pairs
// from several distributions and on every pair of special values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "codegen/emit_kernel.h"
#include "codegen/math_functions.h"
#include "ir/target.h"
#include "support/test_support.h"
#include "toolchain/cc.h"

namespace tlmc::test {
namespace {

// Error of float y against the reference r in ulps of r, subnormal results in multiples of
// 2^-149; NaN where r is a number, a wrong infinity or a zero or infinity of the wrong sign
// are infinite. Then the sweeps: FORMS(in, out) fills out[f][i] with form f of in[i], for
// a batch of 16 inputs (BINARY: in2[i] too).
//
// The reference of a unary function is computed 16 floats at a time by glibc's vector math
// library (libmvec, within 4 ulps of double: 2^-27 of a float's ulp) where VREF names it;
// the batches that also run the plain-C form check it against the scalar libm reference
// (reference gap, in float ulps, and special results that differ). Most floats' errors are
// computed branch-free, 16 at a time; the rest (NaN results, results just above FLT_MAX)
// by ulp_error.
const char* kHarnessHead = R"(
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

/* The ulp of r as a float: 2^-149 below FLT_MIN. */
static double ulp_of(double r) {
  if (fabs(r) < FLT_MIN) return 0x1p-149;
  int e;
  frexp(r, &e);
  return ldexp(1.0, e - 24);
}

static double ulp_error(float y, double r) {
  if (isnan(r)) return isnan(y) ? 0 : INFINITY;
  if (isnan(y)) return INFINITY; /* NaN where the reference is a number */
  if (y == 0 && fabs(r) < 0x1p-150 && !signbit(y) != !signbit(r)) return INFINITY;
  if ((float)r == (float)INFINITY || (float)r == -(float)INFINITY || isinf(r))
    return y == (float)r ? 0 : INFINITY;
  return fabs((double)y - r) / ulp_of(r); /* a subnormal result: absolute */
}

/* GCC keeps branches it cannot prove free of floating-point exceptions (the default
   -ftrapping-math): the loops of the accounting are told they may ignore them, and
   vectorise. The results do not change. */
#if defined(__GNUC__) && !defined(__clang__)
#define BRANCH_FREE __attribute__((optimize("no-trapping-math")))
#else
#define BRANCH_FREE
#endif

#ifdef VREF
#if defined(__AVX512F__)
#define REF_LANES 8
#define MVEC(f) _ZGVeN8v_##f
#elif defined(__AVX2__)
#define REF_LANES 4
#define MVEC(f) _ZGVdN4v_##f
#else
#define REF_LANES 2
#define MVEC(f) _ZGVbN2v_##f
#endif
typedef double ref_vd __attribute__((vector_size(REF_LANES * 8)));
ref_vd MVEC(exp)(ref_vd);
ref_vd MVEC(log)(ref_vd);
ref_vd MVEC(tanh)(ref_vd);
ref_vd MVEC(erf)(ref_vd);
#endif

/* The reference of 16 inputs: libmvec's where VREF names it, else libm's. */
BRANCH_FREE static void reference(const float* x, const float* y, double* r) {
#ifdef VREF
  (void)y;
  for (int i = 0; i < 16; i += REF_LANES) {
    ref_vd v;
    for (int j = 0; j < REF_LANES; ++j) {
      const double a = x[i + j];
      v[j] = a < -VCLAMP ? -VCLAMP : a > VCLAMP ? VCLAMP : a;
    }
    const ref_vd w = VREF(v);
    for (int j = 0; j < REF_LANES; ++j) r[i + j] = w[j];
  }
#else
  for (int i = 0; i < 16; ++i) r[i] = REF((double)x[i], (double)y[i]);
#endif
}

static double worst[NFORMS], worst_gap;
static float worst_x[NFORMS], worst_y[NFORMS], worst_gap_x;
static long gaps_checked;

#ifdef VREF
/* How far reference rv is from libm's rs, in float ulps of rs: infinite for a NaN, a sign
   or a float overflow that differs. */
static double reference_gap(double rv, double rs) {
  if (isnan(rs) || isnan(rv)) return isnan(rs) && isnan(rv) ? 0 : INFINITY;
  if (rv == rs) return 0;
  if (!signbit(rv) != !signbit(rs)) return INFINITY;
  const float fs = (float)rs, fv = (float)rv;
  if (isinf(fs) || isinf(fv)) return fs == fv ? 0 : INFINITY; /* the same float overflow */
  return fabs(rv - rs) / ulp_of(rs);
}

static void check_reference(const float* x, const float* y, const double* r, int n) {
  (void)y;
  for (int i = 0; i < n; ++i) {
    const double gap = reference_gap(r[i], REF((double)x[i], (double)y[i]));
    if (gap > worst_gap) {
      worst_gap = gap;
      worst_gap_x = x[i];
    }
  }
  gaps_checked += n;
}
#endif

/* The error of the first `forms` forms against r, for 16 floats (a last batch repeats its
   first). Three kinds of reference take the branch-free path: 2^-150 <= |r| <= FLT_MAX
   (error |y - r| / ulp of r for a finite y), |r| < 2^-150 (|y - r| / 2^-149, unless y is a
   zero of the other sign) and r that rounds to a float infinity (0 where y is that
   infinity); ulp_error takes the rest. */
BRANCH_FREE static void account(const float* x, const float* y, const double* r,
                                float (*out)[16], int forms) {
  double scale[16];
  uint32_t rounded[16], negative[16], tiny[16], common[16], overflows[16];
  for (int i = 0; i < 16; ++i) {
    const double a = fabs(r[i]);
    const float rf = (float)r[i];
    uint32_t fb;
    memcpy(&fb, &rf, 4);
    uint64_t b;
    memcpy(&b, &r[i], 8);
    common[i] = (a >= 0x1p-150) & (a <= FLT_MAX);
    tiny[i] = a < 0x1p-150;
    overflows[i] = (fb & 0x7fffffffu) == 0x7f800000u;
    rounded[i] = fb;
    negative[i] = b >> 63;
    b = (2046ull - ((b >> 52) & 2047)) << 52; /* 2^-floor(log2 |r|) */
    double p;
    memcpy(&p, &b, 8);
    scale[i] = a >= FLT_MIN ? p * 0x1p23 : 0x1p149; /* 1 / ulp of r */
  }
  double e0[16];
  for (int f = 0; f < forms; ++f) {
    double e[16];
    uint32_t done[16], slow = 0, over = 0;
    const double w = worst[f];
    for (int i = 0; i < 16; ++i) {
      uint32_t vb;
      memcpy(&vb, &out[f][i], 4);
      const uint32_t finite = (vb & 0x7f800000u) != 0x7f800000u;
      const uint32_t zero_of_other_sign = ((vb & 0x7fffffffu) == 0) & ((vb >> 31) != negative[i]);
      const uint32_t fast = (common[i] | (tiny[i] & !zero_of_other_sign)) & finite;
      const double d = fabs((double)out[f][i] - r[i]) * scale[i];
      const double o = vb == rounded[i] ? 0.0 : INFINITY;
      e[i] = overflows[i] ? o : d;
      done[i] = fast | overflows[i];
      slow |= !done[i];
      over |= e[i] > w;
    }
    if (slow)
      for (int i = 0; i < 16; ++i) {
        const float v = out[f][i];
        if (done[i]) continue;
        e[i] = f > 0 && memcmp(&v, &out[0][i], 4) == 0 ? e0[i] : ulp_error(v, r[i]);
        over |= e[i] > w;
      }
    if (f == 0) memcpy(e0, e, sizeof e);
    if (over)
      for (int i = 0; i < 16; ++i)
        if (e[i] > worst[f]) {
          worst[f] = e[i];
          worst_x[f] = x[i];
          worst_y[f] = y[i];
        }
  }
}

static void report(void) {
  for (int f = 0; f < NFORMS; ++f)
    printf("form %s max_ulp %.3f at %.9g %.9g\n", kFormNames[f], worst[f], worst_x[f], worst_y[f]);
  if (gaps_checked)
    printf("reference gap %.3g ulp at %.9g over %ld floats\n", worst_gap, worst_gap_x, gaps_checked);
}
)";

// Unary: every float bit pattern first, first + stride, ... in [LO, HI], then specials.
const char* kUnaryMain = R"(
int main(void) {
  float in[16], out[NFORMS][16];
  double r[16];
  const float zero[16] = {0};
  int k = 0;
  uint64_t batch = 0;
  for (uint64_t b = 0; b < (1ull << 32); b += STRIDE) {
    const uint32_t bits = (uint32_t)b;
    float x;
    memcpy(&x, &bits, 4);
    if (!(x >= LO && x <= HI)) continue;
    in[k] = x;
    if (++k < 16 && b + STRIDE < (1ull << 32)) continue;
    for (int i = k; i < 16; ++i) in[i] = in[0];
    const int plain = batch++ % PLAIN_EVERY == 0;
    FORMS(in, out, plain);
    reference(in, zero, r);
#ifdef VREF
    if (plain) check_reference(in, zero, r, k);
#endif
    account(in, zero, r, out, plain ? NFORMS : NFORMS - 1);
    k = 0;
  }
  report();
  const float specials[16] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, FLT_MAX, -FLT_MAX, FLT_MIN,
                              -FLT_MIN, 0x1p-149f, -0x1p-149f, 1e30f, -1e30f, 200.f, -200.f, 1.f};
  FORMS(specials, out, 1);
  int bad = 0;
  for (int i = 0; i < 16; ++i)
    for (int f = 0; f < NFORMS; ++f) {
      const double r = REF((double)specials[i], 0.0);
      if (ulp_error(out[f][i], r) > MAXULP) {
        printf("special %s(%.9g): got %.9g, want %.9g\n", kFormNames[f], specials[i], out[f][i], r);
        bad = 1;
      }
    }
  if (!bad) printf("special ok\n");
  return 0;
}
)";

// Binary: COUNT pairs from each of four distributions (xorshift, fixed seed), then every
// pair of special values.
const char* kBinaryMain = R"(
static uint64_t state = 0x9E3779B97F4A7C15ull;
static uint32_t next(void) {
  state ^= state << 13; state ^= state >> 7; state ^= state << 17;
  return (uint32_t)(state >> 16);
}
static float bits_float(uint32_t b) { float x; memcpy(&x, &b, 4); return x; }
static float uniform(float lo, float hi) { return lo + (hi - lo) * (float)(next() >> 8) * 0x1p-24f; }

static void draw(int kind, float* x, float* y) {
  switch (kind) {
    case 0: *x = bits_float(next() & 0x7FFFFFFFu); *y = uniform(-4, 4); break;  /* any |x| */
    case 1: *x = uniform(0.5f, 2.0f); *y = bits_float(next()); break;           /* any y */
    case 2: *x = -bits_float(next() & 0x7FFFFFFFu); *y = (float)((int)(next() % 81) - 40); break;
    default: *x = bits_float(next()); *y = bits_float(next()); break;           /* anything */
  }
}

int main(void) {
  float x[16], y[16], out[NFORMS][16];
  double r[16];
  for (int kind = 0; kind < 4; ++kind)
    for (long n = 0; n < COUNT; n += 16) {
      for (int i = 0; i < 16; ++i) draw(kind, &x[i], &y[i]);
      FORMS(x, y, out, 1);
      reference(x, y, r);
      account(x, y, r, out, NFORMS);
    }
  report();
  const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f,
                            2.0f, -2.0f, 3.0f, -3.0f, FLT_MAX, -FLT_MAX, FLT_MIN, 0x1p-149f,
                            -0x1p-149f, 1.0f / 3, 1e30f, -1e30f, 16777216.0f, 16777218.0f,
                            8388609.0f, -8388609.0f, 127.5f, 150.0f, -150.0f};
  const int ns = sizeof specials / sizeof specials[0];
  int bad = 0;
  for (int i = 0; i < ns; ++i)
    for (int j = 0; j < ns; j += 16) {
      for (int k = 0; k < 16; ++k) { x[k] = specials[i]; y[k] = specials[j + k < ns ? j + k : j]; }
      FORMS(x, y, out, 1);
      for (int k = 0; k < 16 && j + k < ns; ++k)
        for (int f = 0; f < NFORMS; ++f) {
          const double r = REF((double)x[k], (double)y[k]);
          if (ulp_error(out[f][k], r) > MAXULP) {
            printf("special %s(%.9g, %.9g): got %.9g, want %.9g\n", kFormNames[f], x[k], y[k],
                   out[f][k], r);
            bad = 1;
          }
        }
    }
  if (!bad) printf("special ok\n");
  return 0;
}
)";

struct MathCase {
  const char* name;  // tlmc_NAMEf, tlmc_vNAME<lanes>
  const char* ref;   // a C expression of x (and y) in double
  const char* vref;  // the same of a vector of doubles x with libmvec (MVEC), or null
  // vref's inputs are clamped to [-clamp, clamp]: beyond, libmvec computes lane by lane
  // with libm (as slow as libm), and the float the reference rounds to is the same.
  double clamp;
  float lo, hi;  // the range tested for ulps (math_functions.h); specials always
  int arity;
};

// exp(700) and exp(-700) are doubles beyond a float's range either way (an overflow to
// infinity; a result within 2^-1000 of exp's); erf and tanh are 1.0 in double from 6 and 20.
const MathCase kCases[] = {
    {"exp", "exp(x)", "MVEC(exp)(x)", 700, -3.4e38f, 3.4e38f, 1},
    {"log", "log(x)", "MVEC(log)(x)", INFINITY, 0.0f, 3.4e38f, 1},
    {"tanh", "tanh(x)", "MVEC(tanh)(x)", 30, -3.4e38f, 3.4e38f, 1},
    {"erf", "erf(x)", "MVEC(erf)(x)", 10, -3.4e38f, 3.4e38f, 1},
    {"sigmoid", "(1.0 / (1.0 + exp(-x)))", "(1.0 / (1.0 + MVEC(exp)(-x)))", 700, -3.4e38f, 3.4e38f,
     1},
    {"rsqrt", "(1.0 / sqrt(x))", nullptr, 0, 0.0f, 3.4e38f, 1},  // sqrt and / round exactly
    {"pow", "pow(x, y)", nullptr, 0, 0, 0, 2},
};

void PrintTo(const MathCase& c, std::ostream* os) { *os << c.name; }

// The forms swept: the host target's vector widths, its scalar form, and the plain-C
// target's scalar form (compiled apart, so with its own flags).
struct Sweep {
  std::string stand_in;  // C source of `stand_in`, swept in the host scalar form's place
  long count = 0;        // pairs per distribution (binary)
  int stride = 1;        // (unary)
};

// The plain-C form, the slowest to evaluate (half of a sweep's time at every float), runs
// on one batch of 16 floats in this many: over 500 million floats a function.
constexpr int kPlainEvery = 8;

std::string sweep(const MathCase& c, const Sweep& s) {
  const ir::Target host = ir::host_target();
  const ir::Target plain = *ir::parse_target("x86-64");
  const bool binary = c.arity == 2;
  const std::string params = binary ? "(x[i], y[i])" : "(x[i])";
  const std::string signature = binary ? "const float* x, const float* y, float (*out)[16]"
                                       : "const float* x, float (*out)[16]";
  const std::string with_plain = ", int plain";
  TempDir dir;
  // The plain-C target's scalar form, in its own object.
  write_file(dir.file("plain.c"), "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n" +
                                      codegen::kernel_preamble(plain) + "void plain_form(" +
                                      signature + ", int f) {\n  for (int i = 0; i < 16; ++i) " +
                                      "out[f][i] = tlmc_" + c.name + "f" + params + ";\n}\n");
  std::vector<std::string> names;
  std::ostringstream forms;
  forms << "void plain_form(" << signature << ", int f);\n"
        << "static void forms(" << signature << with_plain << ") {\n";
  if (host.isa != ir::Isa::Generic)
    for (int lanes = host.vector_lanes(4); lanes >= 4; lanes /= 2) {
      const std::string L = std::to_string(lanes), vf = "tlmc_vf" + L;
      forms << "  for (int i = 0; i < 16; i += " << L << ") {\n    " << vf << " a, b;\n"
            << "    memcpy(&a, x + i, sizeof a);\n"
            << (binary ? "    memcpy(&b, y + i, sizeof b);\n" : "    (void)b;\n")
            << "    a = tlmc_v" << c.name << L << (binary ? "(a, b)" : "(a)")
            << ";\n    memcpy(&out[" << names.size() << "][i], &a, sizeof a);\n  }\n";
      names.push_back("x" + L);
    }
  const std::string scalar = s.stand_in.empty() ? std::string("tlmc_") + c.name + "f" : "stand_in";
  forms << "  for (int i = 0; i < 16; ++i) out[" << names.size() << "][i] = " << scalar << params
        << ";\n";
  names.push_back(s.stand_in.empty() ? "scalar" : "stand_in");
  forms << "  if (plain) plain_form(x, " << (binary ? "y, " : "") << "out, " << names.size()
        << ");\n}\n";
  names.push_back("plain");
  std::string form_names = "static const char* kFormNames[] = {";
  for (const std::string& n : names) form_names += "\"" + n + "\", ";
  form_names += "};\n";

  char defs[512];
  std::snprintf(defs, sizeof defs,
                "#define NFORMS %zu\n#define FORMS forms\n#define REF(x, y) %s\n#define STRIDE %d\n"
                "#define COUNT %ld\n#define LO ((float)%.9e)\n#define HI ((float)%.9e)\n"
                "#define MAXULP %g\n#define PLAIN_EVERY %d\n",
                names.size(), c.ref, s.stride, s.count, c.lo, c.hi, codegen::kMathMaxUlp,
                kPlainEvery);
  const std::string vref =
      c.vref ? std::string("#define VREF(x) ") + c.vref + "\n#define VCLAMP " +
                   (std::isinf(c.clamp) ? "INFINITY" : std::to_string(c.clamp)) + "\n"
             : "";
  write_file(dir.file("sweep.c"), "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n" +
                                      codegen::kernel_preamble(host) + s.stand_in + defs + vref +
                                      form_names + forms.str() + kHarnessHead +
                                      (binary ? kBinaryMain : kUnaryMain));
  std::vector<std::string> objs = toolchain::compile_objects(dir.path(), {"sweep.c"}, host, false);
  const std::vector<std::string> plain_objs =
      toolchain::compile_objects(dir.path(), {"plain.c"}, plain, false);
  objs.insert(objs.end(), plain_objs.begin(), plain_objs.end());
  std::string log;
  EXPECT_EQ(toolchain::run_shell("cd " + dir.path() + " && " + toolchain::c_compiler() + " " +
                                     objs[0] + " " + objs[1] + " -lmvec -lm -o sweep && ./sweep",
                                 &log),
            0)
      << log;
  return log;
}

// The worst error of each form, from the sweep's report; fails on a form past the bound or
// a failed special value.
std::map<std::string, double> expect_accurate(const std::string& out, const std::string& what,
                                              bool libmvec_reference) {
  std::map<std::string, double> worst;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    char form[32];
    double ulp = 0;
    float x = 0, y = 0;
    if (std::sscanf(line.c_str(), "form %31s max_ulp %lf at %f %f", form, &ulp, &x, &y) != 4)
      continue;
    worst[form] = ulp;
    std::printf("%s %s\n", what.c_str(), line.c_str());  // the measured bounds, in the log
    EXPECT_LE(ulp, codegen::kMathMaxUlp) << what << " " << line;
  }
  EXPECT_GE(worst.size(), 2u) << out;
  EXPECT_NE(out.find("special ok"), std::string::npos) << what << ":\n" << out;
  // libmvec's reference where libm's was computed too: a ten-millionth of an ulp apart at
  // most (libmvec is within 4 ulps of double, 2^-27 of a float's ulp), on the plain form's
  // batches: an eighth of the floats swept (of the half at least 0 for log).
  const size_t gap_line = out.find("reference gap ");
  EXPECT_EQ(gap_line != std::string::npos, libmvec_reference) << what << ":\n" << out;
  if (gap_line != std::string::npos) {
    double gap = -1;
    long checked = 0;
    EXPECT_EQ(std::sscanf(out.c_str() + gap_line, "reference gap %lf ulp at %*f over %ld floats",
                          &gap, &checked),
              2)
        << out;
    std::printf("%s %s\n", what.c_str(),
                out.substr(gap_line, out.find('\n', gap_line) - gap_line).c_str());
    EXPECT_LE(gap, 1e-7) << what << ": libmvec's reference is not libm's\n" << out;
    EXPECT_GT(checked, 2.5e8) << what;
  }
  return worst;
}

class MathFunction : public ::testing::TestWithParam<MathCase> {};

TEST_P(MathFunction, EveryFormIsWithinItsBound) {
  const MathCase& c = GetParam();
  Sweep s;
  s.count = 4'000'000;
  const std::map<std::string, double> worst = expect_accurate(sweep(c, s), c.name, c.vref);
  // Every form was swept: the host's vector widths down to 4 lanes and both scalar forms.
  const ir::Target host = ir::host_target();
  const size_t widths =
      host.isa == ir::Isa::Generic ? 0 : static_cast<size_t>(std::log2(host.vector_lanes(4))) - 1;
  EXPECT_EQ(worst.size(), widths + 2);
}

// The sweep fails a function that returns NaN where the reference is a number (a NaN error
// once compared false against every bound, and such a function passed).
TEST(MathSweep, ANaNWhereTheReferenceIsANumberFails) {
  Sweep s;
  s.stride = 997;
  s.stand_in = "static float stand_in(float x) { return x > 1 && x < 80 ? NAN : tlmc_expf(x); }\n";
  const std::string out = sweep(kCases[0], s);
  double ulp = 0;
  float at = 0;
  const size_t line = out.find("form stand_in");
  ASSERT_NE(line, std::string::npos) << out;
  ASSERT_EQ(std::sscanf(out.c_str() + line, "form stand_in max_ulp %lf at %f", &ulp, &at), 2)
      << out;
  EXPECT_TRUE(std::isinf(ulp)) << out;
  EXPECT_GT(at, 1.0f) << out;  // where exp(x) is a float: not an overflow's infinity
  EXPECT_LT(at, 80.0f) << out;
}

// Flushing subnormal results to zero, as exp once did, fails: they are held to their
// absolute error like any other result.
TEST(MathSweep, ASubnormalResultFlushedToZeroFails) {
  Sweep s;
  s.stride = 997;
  s.stand_in = "static float stand_in(float x) { return x < -87.3365f ? 0.0f : tlmc_expf(x); }\n";
  const std::string out = sweep(kCases[0], s);
  const size_t line = out.find("form stand_in");
  ASSERT_NE(line, std::string::npos) << out;
  double ulp = 0;
  float at = 0;
  ASSERT_EQ(std::sscanf(out.c_str() + line, "form stand_in max_ulp %lf at %f", &ulp, &at), 2)
      << out;
  EXPECT_GT(ulp, 1e6) << out;
  EXPECT_LT(at, -87.0f) << out;
}

// A pow that loses the sign of an odd power of a negative number fails among the specials.
TEST(MathSweep, APowWithoutTheSignOfAnOddPowerFails) {
  Sweep s;
  s.count = 1024;
  s.stand_in = "static float stand_in(float x, float y) { return tlmc_powf(fabsf(x), y); }\n";
  const std::string out = sweep(kCases[6], s);
  EXPECT_NE(out.find("special stand_in(-2, 3): got 8, want -8"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Codegen, MathFunction, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<MathCase>& i) {
                           return std::string(i.param.name);
                         });

}  // namespace
}  // namespace tlmc::test
