// The transcendental functions of generated code, written for tlmc: exp, log, tanh, erf,
// sigmoid, sqrt and 1/sqrt, as branch-free C on one float and on a vector of floats, so that
// no kernel calls libm in a loop. Their error bounds are stated here and tested over every
// float of their ranges (tests/codegen/math_functions_are_accurate.cc).
#pragma once

#include <string>

namespace tlmc::codegen {

// The maximum error, in units in the last place of the exact result, that the test
// allows each function anywhere in its range (the measured maximum is a little lower and
// is printed by the test). Results that are subnormal floats (|y| < 2^-126) count in
// absolute error instead: at most this many multiples of 2^-149.
//   exp     x in [-87.33, 88.72]; above: +inf; below: 0 (no subnormal results, which are
//           slow on some CPUs)
//   log     x > 0, subnormals included; log(0) = -inf, log(x < 0) = NaN
//   tanh    every float
//   erf     every float
//   sigmoid x >= -87.33 (a normal result); below it a subnormal or 0
//   sqrt    the hardware's, correctly rounded; rsqrt = 1 / sqrt
// NaN in gives NaN out; infinities give the limits. Measured maxima (16 lanes, AVX-512 with
// FMA, every float; scalar without FMA, every 61st float): exp 1.26 / 1.26, log 1.97 / 1.88,
// tanh 1.34 / 1.32, erf 1.22 / 1.25, sigmoid 3.19 / 2.86, rsqrt 1.49 / 1.49.
constexpr double kMathMaxUlp = 4.0;

// C text of the functions for `lanes` floats: lanes == 1 gives the scalar functions
// tlmc_expf, tlmc_logf, tlmc_tanhf, tlmc_erff, tlmc_sigmoidf, tlmc_rsqrtf (plain C); lanes
// > 1 gives tlmc_vexpL ... tlmc_vrsqrtL on the vector types tlmc_vfL and tlmc_viL, which the
// caller has defined with tlmc_vsplatL and tlmc_vselectL. Both compute the same
// approximations, operation for operation, so a vector loop and its scalar tail agree.
std::string math_functions(int lanes);

}  // namespace tlmc::codegen
