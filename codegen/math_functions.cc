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
    R"(/* exp(x) = 2^n e^r, n = round(x / ln 2), |r| <= ln(2)/2. x is first clamped to
   [-150 ln 2, 128 ln 2): below, exp(x) < 2^-150 rounds to 0; there n lies in [-150, 128],
   with r < 0 at both ends. 2^n is applied in two halves, 2^n1 into p's exponent field by
   one integer addition (p 2^n1 is a normal float) and then a multiplication by 2^n2, so
   that a result below 2^-126 is the subnormal float nearest p 2^n, rounded once. NaN takes
   the path of the lower bound and is put back at the end. */
TLMC_HELPER $V TLMC_F(exp)($V x) {
  $V c = TLMC_F(msel)(TLMC_M(x > -103.972084f), x, TLMC_K(-103.972084f)); /* < -150 ln 2 */
  c = TLMC_F(msel)(TLMC_M(c < 88.7228317f), c, TLMC_K(88.7228317f));      /* < 128 ln 2 */
  const $V t = c * 1.44269504f + 12582912.0f; /* 1.5 * 2^23: rounds to an integer */
  const $I n = TLMC_F(mbits)(t) - 0x4B400000;  /* that integer, read from t's low bits */
  const $V nf = t - 12582912.0f;
  const $V r = (c - nf * 0.693359375f) - nf * -2.12194440e-4f; /* ln 2 in two parts */
  const $V p = 1.0f + r + r * r * (0.49999994f + r * (0.166665211f + r * (0.041668389f +
                                   r * (0.00836871099f + r * 0.00138146046f))));
  const $I n1 = ((n + 256) >> 1) - 128, n2 = n - n1; /* both in [-75, 64] */
  const $V y = TLMC_F(mfloat)(TLMC_F(mbits)(p) + n1 * 8388608) *
               TLMC_F(mfloat)((n2 + 127) * 8388608);
  const $V y1 = TLMC_F(msel)(TLMC_M(x <= 88.7228317f), y, TLMC_K(INFINITY));
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
/* tanh(x): an odd polynomial below 0.625, 1 - 2 / (e^2|x| + 1) above; computed on |x|,
   then given x's sign (so that tanh(-0) is -0). */
TLMC_HELPER $V TLMC_F(tanh)($V x) {
  const $I sign = TLMC_F(mbits)(x) & (-2147483647 - 1);
  const $V a = TLMC_F(mfloat)(TLMC_F(mbits)(x) & 2147483647);
  const $V z = a * a;
  const $V small = a + a * z * (-0.333333313f + z * (0.133332059f + z * (-0.0539467633f +
                                 z * (0.0217007063f + z * (-0.00817740615f + z * 0.00214296859f)))));
  const $V large = 1.0f - 2.0f / (TLMC_F(exp)(a + a) + 1.0f);
  return TLMC_F(mfloat)(TLMC_F(mbits)(TLMC_F(msel)(TLMC_M(a < 0.625f), small, large)) | sign);
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
  const $V ac = TLMC_F(msel)(TLMC_M(a > 4.0f), TLMC_K(4.0f), a); /* erf(4) rounds to 1 */
  const $V large = 1.0f - TLMC_F(exp)(-(ac * ac)) * r;
  return TLMC_F(msel)(TLMC_M(a < 0.921875f), small, TLMC_F(mfloat)(TLMC_F(mbits)(large) | sign));
}
/* sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) below, e = exp(-|x|) in (0, 1]:
   no overflow, and far below 0 the result is e itself, subnormal where it is. */
TLMC_HELPER $V TLMC_F(sigmoid)($V x) {
  const $V e = TLMC_F(exp)(-TLMC_F(mfloat)(TLMC_F(mbits)(x) & 2147483647));
  const $V q = 1.0f / (1.0f + e);
  return TLMC_F(msel)(TLMC_M(x >= 0.0f), q, e * q);
}
TLMC_HELPER $V TLMC_F(rsqrt)($V x) { return 1.0f / TLMC_F(sqrt)(x); }
/* pow(x, y) = 2^(y log2|x|), with the sign and the special values of C's powf. The
   logarithm, the product and the power of two are computed in double, where every float is
   a normal number: log2|x| = e + log2(m), |x| = m 2^e, m in [sqrt(1/2), sqrt(2)), log(m) =
   2 atanh(s) by its series to s^13 (|s| <= 0.172), and 2^t = 2^n e^u, |u| <= ln(2)/2, by
   Taylor's series to u^9. Each is within about 2^-40 of exact, so that the double result
   is within about 2^-33 of |x|^y (|t| <= 200 where the float result is not 0 or infinite)
   and the float result, one rounding of it, within 0.51 ulp; subnormal results included. */
TLMC_HELPER $V TLMC_F(pow)($V x, $V y) {
  const $D xd = TLMC_F(mwiden)(x), yd = TLMC_F(mwiden)(y); /* exact */
  const $D ad = TLMC_F(mdouble)(TLMC_F(mdbits)(xd) & 0x7FFFFFFFFFFFFFFFLL);
  const $D ay = TLMC_F(mdouble)(TLMC_F(mdbits)(yd) & 0x7FFFFFFFFFFFFFFFLL);
  const $L finite = TLMC_MD(ad > 0.0) & TLMC_MD(ad < INFINITY);
  const $L bits = TLMC_F(mdbits)(TLMC_F(mdsel)(finite, ad, TLMC_KD(1.0)));
  const $L e = (bits - 0x3FE6A09E667F3BCDLL) >> 52; /* 0x3FE6A09E667F3BCD: sqrt(1/2) */
  const $D m = TLMC_F(mdouble)(bits - e * 4503599627370496LL); /* 2^52 */
  const $D f = m - 1.0;
  const $D s = f / (f + 2.0);
  const $D z = s * s;
  const $D ln_m = (s + s) + s * z * (0.66666666666666667 + z * (0.4 + z * (0.28571428571428571 +
                  z * (0.22222222222222222 + z * (0.18181818181818182 + z * 0.15384615384615385)))));
  const $D log2_a = TLMC_F(mdsel)(finite, TLMC_F(mltod)(e) + ln_m * 1.4426950408889634,
                                  TLMC_F(mdsel)(TLMC_MD(ad == 0.0), TLMC_KD(-INFINITY), ad));
  $D t = yd * log2_a;
  t = TLMC_F(mdsel)(TLMC_MD(t > -200.0), t, TLMC_KD(-200.0));
  t = TLMC_F(mdsel)(TLMC_MD(t < 200.0), t, TLMC_KD(200.0));
  const $D tr = t + 6755399441055744.0; /* 1.5 * 2^52: rounds to an integer */
  const $L n = TLMC_F(mdbits)(tr) - 0x4338000000000000LL;
  const $D u = (t - (tr - 6755399441055744.0)) * 0.69314718055994531;
  const $D p = 1.0 + u * (1.0 + u * (0.5 + u * (0.16666666666666667 + u * (0.041666666666666667 +
               u * (0.0083333333333333333 + u * (0.0013888888888888889 + u * (1.9841269841269841e-4 +
               u * (2.4801587301587302e-5 + u * 2.7557319223985891e-6))))))));
  const $D r = TLMC_F(mdouble)(TLMC_F(mdbits)(p) + n * 4503599627370496LL); /* p 2^n */
  /* y is an integer when |y| >= 2^24 (and then even), or when |y| + 2^52 drops nothing of
     it; the last bit of that sum is then y's parity. Infinite y counts as even. */
  const $L big = TLMC_MD(ay >= 16777216.0);
  const $D yb = TLMC_F(mdsel)(big, TLMC_KD(0.0), ay) + 4503599627370496.0;
  const $L integer = big | TLMC_MD(yb - 4503599627370496.0 == ay);
  const $L odd = integer & ~big & -(TLMC_F(mdbits)(yb) & 1);
  const $L negative = TLMC_MD(TLMC_F(mdbits)(xd) < 0); /* -0 included */
  $D v = TLMC_F(mdsel)(negative & odd, -r, r);
  v = TLMC_F(mdsel)((negative & finite & ~integer) | TLMC_MD(xd != xd) | TLMC_MD(yd != yd),
                    TLMC_KD(NAN), v);
  /* pow(x, 0) = pow(1, y) = pow(-1, +-inf) = 1, NaN or not */
  v = TLMC_F(mdsel)(TLMC_MD(yd == 0.0) | TLMC_MD(xd == 1.0) |
                    (TLMC_MD(ad == 1.0) & TLMC_MD(ay == INFINITY)), TLMC_KD(1.0), v);
  return TLMC_F(mnarrow)(v);
}
)";

// Lane helpers of one width: bit casts, int-to-float conversion, selection by mask, sqrt.
std::string scalar_helpers() {
  return R"(TLMC_HELPER int32_t tlmc_mbitsf(float x) { int32_t i; memcpy(&i, &x, 4); return i; }
TLMC_HELPER float tlmc_mfloatf(int32_t i) { float x; memcpy(&x, &i, 4); return x; }
TLMC_HELPER float tlmc_mtofloatf(int32_t i) { return (float)i; }
TLMC_HELPER float tlmc_mself(int32_t m, float a, float b) { return m ? a : b; }
TLMC_HELPER float tlmc_sqrtf(float x) { return sqrtf(x); }
TLMC_HELPER double tlmc_mwidenf(float x) { return x; }
TLMC_HELPER float tlmc_mnarrowf(double x) { return (float)x; }
TLMC_HELPER int64_t tlmc_mdbitsf(double x) { int64_t i; memcpy(&i, &x, 8); return i; }
TLMC_HELPER double tlmc_mdoublef(int64_t i) { double x; memcpy(&x, &i, 8); return x; }
TLMC_HELPER double tlmc_mltodf(int64_t i) { return (double)i; }
TLMC_HELPER double tlmc_mdself(int64_t m, double a, double b) { return m ? a : b; }
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
  // Doubles of as many lanes, for pow.
  const std::string vd = "tlmc_vd" + L, vl = "tlmc_vl" + L, bytes = std::to_string(lanes * 8);
  s += "typedef double " + vd + " __attribute__((vector_size(" + bytes + ")));\n";
  s += "typedef int64_t " + vl + " __attribute__((vector_size(" + bytes + ")));\n";
  s += "TLMC_HELPER " + vd + " tlmc_vmwiden" + L + "(" + vf +
       " x) { return __builtin_convertvector(x, " + vd + "); }\n";
  s += "TLMC_HELPER " + vf + " tlmc_vmnarrow" + L + "(" + vd +
       " x) { return __builtin_convertvector(x, " + vf + "); }\n";
  s += "TLMC_HELPER " + vd + " tlmc_vmdsplat" + L + "(double x) { return x - (" + vd + "){}; }\n";
  s += "TLMC_HELPER " + vl + " tlmc_vmdbits" + L + "(" + vd + " x) { return (" + vl + ")x; }\n";
  s += "TLMC_HELPER " + vd + " tlmc_vmdouble" + L + "(" + vl + " i) { return (" + vd + ")i; }\n";
  s += "TLMC_HELPER " + vd + " tlmc_vmltod" + L + "(" + vl +
       " i) { return __builtin_convertvector(i, " + vd + "); }\n";
  s += "TLMC_HELPER " + vd + " tlmc_vmdsel" + L + "(" + vl + " m, " + vd + " a, " + vd +
       " b) { return (" + vd + ")((m & (" + vl + ")a) | (~m & (" + vl + ")b)); }\n";
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
  s = replace_all(s, "TLMC_KD(", scalar ? "(" : "tlmc_vmdsplat" + L + "(");
  s = replace_all(s, "TLMC_K(", scalar ? "(" : "tlmc_vsplat" + L + "(");
  s = replace_all(s, "TLMC_MD(", scalar ? "-(int64_t)(" : "(");
  s = replace_all(s, "TLMC_M(", scalar ? "-(int32_t)(" : "(");
  s = replace_all(s, "$V", scalar ? "float" : "tlmc_vf" + L);
  s = replace_all(s, "$I", scalar ? "int32_t" : "tlmc_vi" + L);
  s = replace_all(s, "$D", scalar ? "double" : "tlmc_vd" + L);
  s = replace_all(s, "$L", scalar ? "int64_t" : "tlmc_vl" + L);
  return (scalar ? scalar_helpers() : vector_helpers(lanes)) + s;
}

}  // namespace tlmc::codegen
