// C text of scalar expressions, shared by the C and the CUDA kernel emitters: literals,
// buffer and variable names, and one expression element by element, calling the helpers of
// the kernel preamble (tlmc_floordiv, tlmc_expf, ...) where C has no operator for it.
#pragma once

#include <cstdint>
#include <string>

#include "ir/expr.h"

namespace tlmc::codegen {

std::string int_literal(int64_t v);
std::string float_literal(double v, ir::DType t);
// The C function for a float unary operation on one element.
std::string unary_call(ir::UnaryOp op, const std::string& x);
std::string buf_name(int b);  // "b3"
std::string var_name(int v);  // "v7"
bool positive_const(const ir::Expr& e);
// Is an integer expression never negative? Loop variables count from 0; sums, products,
// quotients and remainders of non-negative values stay non-negative. There C's / and %
// are floor division and modulo, and cheaper than the general helpers.
bool non_negative(const ir::Expr& e);
// Scalar C text of an expression.
std::string scalar_c(const ir::Expr& e);
// The helper functions scalar_c calls (tlmc_floordiv, tlmc_divi, tlmc_mini, tlmc_fmaxf, ...),
// each declared TLMC_HELPER, which the caller defines. `hide_minimum`: tlmc_mini passes its
// result through an empty asm (a CPU compiler's workaround, below; not for CUDA).
std::string scalar_helpers(bool hide_minimum);
// C converting x, of dtype `from`, to dtype `to` (the 16-bit floats through the helpers
// below).
std::string cast_c(ir::DType to, ir::DType from, const std::string& x);
// The conversions of float16 and bfloat16 that cast_c calls; a preamble includes them
// where a kernel stores such a tensor.
std::string half_float_helpers();

}  // namespace tlmc::codegen
