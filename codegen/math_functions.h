// The transcendental functions of generated code, written for tlmc: exp, log, tanh, erf,
// sigmoid, sqrt, 1/sqrt and pow, as branch-free C on one float and on a vector of floats, so
// that no kernel calls libm. Their error bounds are stated here and tested over every float
// (pow: over millions of pairs and every pair of special values), in every form a kernel
// calls: each vector width of the target and its scalar form, and the plain-C target's
// scalar form without FMA on one float in 8 (tests/codegen/math_functions_are_accurate.cc).
#pragma once

#include <string>

namespace tlmc::codegen {

// The maximum error, in units in the last place of the exact result, that the test
// allows each function anywhere, over every float (the measured maximum is lower and is
// printed by the test). Results that are subnormal floats (|y| < 2^-126) are computed as
// subnormals, never flushed to 0, and count in absolute error: at most this many
// multiples of 2^-149.
//   exp     every float: above 128 ln 2, +inf; below -150 ln 2, 0 (the exact result rounds
//           to it); subnormal results in between
//   log     x > 0, subnormals included; log(0) = -inf, log(x < 0) = NaN
//   tanh    every float
//   erf     every float
//   sigmoid every float (1 / (1 + e^-|x|), or e^-|x| times it below 0: no overflow)
//   sqrt    the hardware's, correctly rounded; rsqrt = 1 / sqrt
//   pow     every pair, with the special values of C's powf (pow(x, 0) = pow(1, y) = 1,
//           NaN for a negative base and a non-integer exponent, the sign of an odd power);
//           computed in double and rounded once, so within 0.51 ulp
// NaN in gives NaN out; infinities give the limits. Measured maxima (AVX-512 with FMA: 16,
// 8 and 4 lanes and scalar, every float, all alike; then scalar without FMA, one float in
// 8): exp 1.26 / 1.26, log 1.97 / 1.97, tanh 1.34 / 1.34, erf 1.22 / 1.30, sigmoid 3.00 /
// 3.00, rsqrt 1.49 / 1.47, pow 0.50 / 0.50 (16 million pairs).
constexpr double kMathMaxUlp = 4.0;

// C text of the functions for `lanes` floats: lanes == 1 gives the scalar functions
// tlmc_expf, tlmc_logf, tlmc_tanhf, tlmc_erff, tlmc_sigmoidf, tlmc_rsqrtf, tlmc_powf (plain
// C); lanes > 1 gives tlmc_vexpL ... tlmc_vpowL on the vector types tlmc_vfL and tlmc_viL,
// which the caller has defined with tlmc_vsplatL and tlmc_vselectL (and defines the double
// and int64 vectors tlmc_vdL and tlmc_vlL that pow computes in). Both compute the same
// approximations, operation for operation, so a vector loop and its scalar tail agree.
std::string math_functions(int lanes);

}  // namespace tlmc::codegen
