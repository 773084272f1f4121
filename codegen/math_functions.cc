#include "codegen/math_functions.h"

#include <regex>

namespace tlmc::codegen {
namespace {

// The functions, once, for any width. Before use the text is specialised:
//   $V, $I        the float and int32 types (float, int32_t or tlmc_vfL, tlmc_viL)
//   TLMC_F(name)  the function `name` of this width (tlmc_namef or tlmc_vnameL)
//   TLMC_K(c)     the constant c as a $V
//   TLMC_M(cond)  the comparison as a lane mask of $I: all ones where true, 0 where false
// Vector arithmetic with a scalar operand broadcasts it (GCC's and Clang's vector
// extension), so the arithmetic reads the same at every width. Every integer operation
// stays within int32 and shifts only non-negative values: the scalar forms are plain C
// with no undefined behaviour. The polynomial coefficients are near-minimax fits in double
// precision (scripts/fit_math_coefficients.py), rounded to float.
constexpr const char* kTemplate =
    R"(/* exp(x) = 2^n e^r, n = round(x / ln 2), |r| <= ln(2)/2. x is first clamped to the
   floats whose exp is a normal float, [-126 ln 2, 128 ln 2); there n lies in [-126, 128],
   with r >= 0 at n = -126 and r < 0 at n = 128, so that p 2^n is a normal float and 2^n
   goes into p's exponent field by one integer addition. A result below 2^-126 is 0, never
   a subnormal: subnormal arithmetic costs a hundred cycles or more on some CPUs, and a
   masked softmax has rows of them. NaN takes the path of the lower bound and is put back
   at the end. */
TLMC_HELPER $V TLMC_F(exp)($V x) {
  $V c = TLMC_F(msel)(TLMC_M(x > -87.3365402f), x, TLMC_K(-87.3365402f)); /* > -126 ln 2 */
  c = TLMC_F(msel)(TLMC_M(c < 88.7228317f), c, TLMC_K(88.7228317f));      /* < 128 ln 2 */
  const $V t = c * 1.44269504f + 12582912.0f; /* 1.5 * 2^23: rounds to an integer */
  const $I n = TLMC_F(mbits)(t) - 0x4B400000;  /* that integer, read from t's low bits */
  const $V nf = t - 12582912.0f;
  const $V r = (c - nf * 0.693359375f) - nf * -2.12194440e-4f; /* ln 2 in two parts */
  const $V p = 1.0f + r + r * r * (0.49999994f + r * (0.166665211f + r * (0.041668389f +
                                   r * (0.00836871099f + r * 0.00138146046f))));
  const $V y = TLMC_F(mfloat)(TLMC_F(mbits)(p) + n * 8388608);
  const $V y0 = TLMC_F(msel)(TLMC_M(x >= -87.3365402f), y, TLMC_K(0.0f));
  const $V y1 = TLMC_F(msel)(TLMC_M(x <= 88.7228317f), y0, TLMC_K(INFINITY));
  return TLMC_F(msel)(TLMC_M(x == x), y1, x);
}
/* log(x) = e ln 2 + log(m), x = m 2^e with m in [sqrt(1/2), sqrt(2)); log(m) = 2 atanh(s)
   with s = (m - 1) / (m + 1), |s| <= 0.172. Subnormal x are scaled by 2^25 first. */
TLMC_HELPER $V TLMC_F(log)($V x) {
  const $I tiny = TLMC_M(x < 1.17549435e-38f);
  const $V xs = TLMC_F(msel)(tiny, x * 33554432.0f, x);
  const $I bits = TLMC_F(mbits)(TLMC_F(msel)(TLMC_M(xs > 0.0f), xs, TLMC_K(1.0f)));
  const $I e = (bits - 0x3F3504F3) >> 23; /* 0x3F3504F3: sqrt(1/2) */
  const $V m = TLMC_F(mfloat)(bits - e * 8388608);
  const $V ef = TLMC_F(mtofloat)(e) - TLMC_F(mtofloat)(tiny & 25);
  const $V f = m - 1.0f;
  const $V s = f / (f + 2.0f);
  const $V z = s * s;
  const $V q = s * z * (0.666666627f + z * (0.400003344f + z * (0.285373092f + z * 0.235821351f)));
  const $V y = ef * 0.693359375f + ((s + s + q) + ef * -2.12194440e-4f);
  const $V special = TLMC_F(msel)(TLMC_M(x == 0.0f), TLMC_K(-INFINITY),
                                  TLMC_F(msel)(TLMC_M(x == INFINITY), x, TLMC_K(NAN)));
  return TLMC_F(msel)(TLMC_M(x > 0.0f) & TLMC_M(x < INFINITY), y, special);
}
/* tanh(x): an odd polynomial below 0.625, 1 - 2 / (e^2|x| + 1) above, with x's sign. */
TLMC_HELPER $V TLMC_F(tanh)($V x) {
  const $I sign = TLMC_F(mbits)(x) & (-2147483647 - 1);
  const $V a = TLMC_F(mfloat)(TLMC_F(mbits)(x) & 2147483647);
  const $V z = x * x;
  const $V small = x + x * z * (-0.333333313f + z * (0.133332059f + z * (-0.0539467633f +
                                 z * (0.0217007063f + z * (-0.00817740615f + z * 0.00214296859f)))));
  const $V large = 1.0f - 2.0f / (TLMC_F(exp)(a + a) + 1.0f);
  return TLMC_F(msel)(TLMC_M(a < 0.625f), small, TLMC_F(mfloat)(TLMC_F(mbits)(large) | sign));
}
/* erf(x): x + x P(x^2) below 0.921875 (2/sqrt(pi) = 1 + 0.128..., so that x itself is exact); above, 1 - erfc(|x|) with x's sign,
   erfc(a) = e^(-a^2) R(1 / (1 + a)), R a polynomial (erfc(a) e^(a^2) varies slowly). */
TLMC_HELPER $V TLMC_F(erf)($V x) {
  const $I sign = TLMC_F(mbits)(x) & (-2147483647 - 1);
  const $V a = TLMC_F(mfloat)(TLMC_F(mbits)(x) & 2147483647);
  const $V z = x * x;
  const $V small = x + x * (0.128379166f + z * (-0.376126349f + z * (0.112836957f +
                    z * (-0.0268594027f + z * (0.0052010417f + z * (-0.000814279425f +
                    z * 8.37042462e-05f))))));
  const $V t = 1.0f / (1.0f + a);
  const $V r = -0.000136404662f + t * (0.567405283f + t * (0.5329566f + t * (0.438191861f +
               t * (-0.665107489f + t * (-0.551506877f + t * (1.23423803f + t * -0.57305032f))))));
  const $V large = 1.0f - TLMC_F(exp)(-(a * a)) * r;
  return TLMC_F(msel)(TLMC_M(a < 0.921875f), small, TLMC_F(mfloat)(TLMC_F(mbits)(large) | sign));
}
TLMC_HELPER $V TLMC_F(sigmoid)($V x) { return 1.0f / (1.0f + TLMC_F(exp)(-x)); }
TLMC_HELPER $V TLMC_F(rsqrt)($V x) { return 1.0f / TLMC_F(sqrt)(x); }
)";

// Lane helpers of one width: bit casts, int-to-float conversion, selection by mask, sqrt.
std::string scalar_helpers() {
  return R"(TLMC_HELPER int32_t tlmc_mbitsf(float x) { int32_t i; memcpy(&i, &x, 4); return i; }
TLMC_HELPER float tlmc_mfloatf(int32_t i) { float x; memcpy(&x, &i, 4); return x; }
TLMC_HELPER float tlmc_mtofloatf(int32_t i) { return (float)i; }
TLMC_HELPER float tlmc_mself(int32_t m, float a, float b) { return m ? a : b; }
TLMC_HELPER float tlmc_sqrtf(float x) { return sqrtf(x); }
)";
}

std::string vector_helpers(int lanes) {
  const std::string L = std::to_string(lanes), vf = "tlmc_vf" + L, vi = "tlmc_vi" + L;
  std::string s;
  s += "TLMC_HELPER " + vi + " tlmc_vmbits" + L + "(" + vf + " x) { return (" + vi + ")x; }\n";
  s += "TLMC_HELPER " + vf + " tlmc_vmfloat" + L + "(" + vi + " i) { return (" + vf + ")i; }\n";
  s += "TLMC_HELPER " + vf + " tlmc_vmtofloat" + L + "(" + vi +
       " i) { return __builtin_convertvector(i, " + vf + "); }\n";
  s += "TLMC_HELPER " + vf + " tlmc_vmsel" + L + "(" + vi + " m, " + vf + " a, " + vf +
       " b) { return tlmc_vselect" + L + "(m, a, b); }\n";
  // A lane loop the compiler turns into one square-root instruction (-fno-math-errno).
  s += "TLMC_HELPER " + vf + " tlmc_vsqrt" + L + "(" + vf + " x) {\n  " + vf +
       " r;\n  for (int i = 0; i < " + L + "; ++i) r[i] = sqrtf(x[i]);\n  return r;\n}\n";
  return s;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t i = 0; (i = s.find(from, i)) != std::string::npos; i += to.size())
    s.replace(i, from.size(), to);
  return s;
}

}  // namespace

std::string math_functions(int lanes) {
  const bool scalar = lanes == 1;
  const std::string L = std::to_string(lanes);
  std::string s = kTemplate;
  const std::regex call(R"(TLMC_F\((\w+)\))");
  std::string named;
  auto from = s.cbegin();
  for (std::sregex_iterator m(s.begin(), s.end(), call), end; m != end; ++m) {
    named.append(from, (*m)[0].first);
    named += scalar ? "tlmc_" + (*m)[1].str() + "f" : "tlmc_v" + (*m)[1].str() + L;
    from = (*m)[0].second;
  }
  s = named.append(from, s.cend());
  s = replace_all(s, "TLMC_K(", scalar ? "(" : "tlmc_vsplat" + L + "(");
  s = replace_all(s, "TLMC_M(", scalar ? "-(int32_t)(" : "(");
  s = replace_all(s, "$V", scalar ? "float" : "tlmc_vf" + L);
  s = replace_all(s, "$I", scalar ? "int32_t" : "tlmc_vi" + L);
  return (scalar ? scalar_helpers() : vector_helpers(lanes)) + s;
}

}  // namespace tlmc::codegen
