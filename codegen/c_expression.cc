#include "codegen/c_expression.h"

#include <cmath>
#include <cstdio>

#include "ir/diagnostic.h"

namespace tlmc::codegen {

using ir::BinaryOp;
using ir::Expr;
using ir::ExprKind;
using ir::UnaryOp;

std::string int_literal(int64_t v) {
  if (v >= -2147483647 && v <= 2147483647) return std::to_string(v);
  return std::to_string(v) + "LL";
}

std::string float_literal(double v, ir::DType t) {
  if (std::isinf(v)) return v > 0 ? "INFINITY" : "(-INFINITY)";
  if (std::isnan(v)) return "NAN";
  char buf[64];
  std::snprintf(buf, sizeof buf, t == ir::DType::Float32 ? "%.9g" : "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  if (t == ir::DType::Float32) s += "f";
  return v < 0 ? "(" + s + ")" : s;
}

std::string unary_call(UnaryOp op, const std::string& x) {
  switch (op) {
    case UnaryOp::Neg:
      return "(-" + x + ")";
    case UnaryOp::Exp:
      return "tlmc_expf(" + x + ")";
    case UnaryOp::Log:
      return "tlmc_logf(" + x + ")";
    case UnaryOp::Sqrt:
      return "sqrtf(" + x + ")";  // one instruction (-fno-math-errno), correctly rounded
    case UnaryOp::Tanh:
      return "tlmc_tanhf(" + x + ")";
    case UnaryOp::Erf:
      return "tlmc_erff(" + x + ")";
    case UnaryOp::Sigmoid:
      return "tlmc_sigmoidf(" + x + ")";
    case UnaryOp::Abs:
      return "fabsf(" + x + ")";
    case UnaryOp::Not:
      return "(!" + x + ")";
    case UnaryOp::Floor:
      return "floorf(" + x + ")";
  }
  return "";
}

std::string buf_name(int b) { return "b" + std::to_string(b); }
std::string var_name(int v) { return "v" + std::to_string(v); }

bool positive_const(const Expr& e) {
  int64_t c;
  return ir::is_int_const(e, &c) && c > 0;
}

bool non_negative(const Expr& e) {
  int64_t c;
  switch (e->kind) {
    case ExprKind::IntImm:
      return e->int_value >= 0;
    case ExprKind::Var:
      return true;
    case ExprKind::Binary:
      switch (e->binary_op) {
        case BinaryOp::Add:
        case BinaryOp::Mul:
        case BinaryOp::Min:
        case BinaryOp::Max:
          return non_negative(e->args[0]) && non_negative(e->args[1]);
        case BinaryOp::FloorDiv:
        case BinaryOp::FloorMod:
          return non_negative(e->args[0]) && ir::is_int_const(e->args[1], &c) && c > 0;
        default:
          return false;
      }
    default:
      return false;
  }
}

std::string scalar_c(const Expr& e) {
  switch (e->kind) {
    case ExprKind::IntImm:
      return int_literal(e->int_value);
    case ExprKind::FloatImm:
      return float_literal(e->float_value, e->dtype);
    case ExprKind::Var:
      return var_name(e->var_id);
    case ExprKind::Load:
      return buf_name(e->var_id) + "[" + scalar_c(e->args[0]) + "]";
    case ExprKind::Unary: {
      const std::string x = scalar_c(e->args[0]);
      if (e->dtype == ir::DType::Float32) return unary_call(e->unary_op, x);
      if (e->unary_op == UnaryOp::Neg) return "(-" + x + ")";
      if (e->unary_op == UnaryOp::Not) return "(!" + x + ")";
      if (e->unary_op == UnaryOp::Abs) return "(" + x + " < 0 ? -" + x + " : " + x + ")";
      TLMC_ASSERT(false,
                  "unary " << ir::unary_name(e->unary_op) << " on " << ir::dtype_name(e->dtype));
      return "";
    }
    case ExprKind::Binary: {
      const std::string a = scalar_c(e->args[0]), b = scalar_c(e->args[1]);
      // float32 or float64 (the 16-bit floats compute widened to float32)
      const bool is_float = ir::dtype_is_float(e->args[0]->dtype);
      const bool is_double = e->args[0]->dtype == ir::DType::Float64;
      switch (e->binary_op) {
        case BinaryOp::Add:
          return "(" + a + " + " + b + ")";
        case BinaryOp::Sub:
          return "(" + a + " - " + b + ")";
        case BinaryOp::Mul:
          return "(" + a + " * " + b + ")";
        case BinaryOp::Div:
          return is_float ? "(" + a + " / " + b + ")" : "tlmc_divi(" + a + ", " + b + ")";
        case BinaryOp::FloorDiv:
          if (non_negative(e->args[0]) && positive_const(e->args[1]))
            return "(" + a + " / " + b + ")";
          return "tlmc_floordiv(" + a + ", " + b + ")";
        case BinaryOp::FloorMod:
          if (non_negative(e->args[0]) && positive_const(e->args[1]))
            return "(" + a + " % " + b + ")";
          return "tlmc_floormod(" + a + ", " + b + ")";
        case BinaryOp::Min:
          return (is_double  ? "tlmc_fmin("
                  : is_float ? "tlmc_fminf("
                             : "tlmc_mini(") +
                 a + ", " + b + ")";
        case BinaryOp::Max:
          return (is_double  ? "tlmc_fmax("
                  : is_float ? "tlmc_fmaxf("
                             : "tlmc_maxi(") +
                 a + ", " + b + ")";
        case BinaryOp::Pow:
          return "tlmc_powf(" + a + ", " + b + ")";
        case BinaryOp::LT:
          return "(" + a + " < " + b + ")";
        case BinaryOp::LE:
          return "(" + a + " <= " + b + ")";
        case BinaryOp::EQ:
          return "(" + a + " == " + b + ")";
        case BinaryOp::NE:
          return "(" + a + " != " + b + ")";
        case BinaryOp::And:
          return "(" + a + " && " + b + ")";
        case BinaryOp::Or:
          return "(" + a + " || " + b + ")";
        case BinaryOp::ShuffleXor:
          // CUDA only (the C emitter never meets one): the whole warp takes part.
          return "__shfl_xor_sync(0xffffffffu, " + a + ", " + b + ")";
      }
      return "";
    }
    case ExprKind::Select:
      return "(" + scalar_c(e->args[0]) + " ? " + scalar_c(e->args[1]) + " : " +
             scalar_c(e->args[2]) + ")";
    case ExprKind::Cast:
      return cast_c(e->dtype, e->args[0]->dtype, scalar_c(e->args[0]));
  }
  return "";
}

std::string cast_c(ir::DType to, ir::DType from, const std::string& x) {
  // The 16-bit floats are bits in a uint16_t: converted through float by the helpers
  // (half_float_helpers), never by a C cast of the integer.
  if (from == ir::DType::BFloat16 || from == ir::DType::Float16) {
    const std::string wide =
        (from == ir::DType::BFloat16 ? "tlmc_bf16_to_f32(" : "tlmc_f16_to_f32(") + x + ")";
    return to == ir::DType::Float32 ? wide : cast_c(to, ir::DType::Float32, wide);
  }
  if (to == ir::DType::BFloat16) return "tlmc_f32_to_bf16((float)" + x + ")";
  if (to == ir::DType::Float16) return "tlmc_f32_to_f16((float)" + x + ")";
  return "((" + std::string(ir::dtype_c_type(to)) + ")" + x + ")";
}

std::string half_float_helpers() {
  return R"(/* float16 and bfloat16 elements are their bits in a uint16_t: exact widening, and
   rounding to nearest even (NaN stays NaN; overflow gives infinity). */
TLMC_HELPER float tlmc_bf16_to_f32(uint16_t h) {
  uint32_t b = (uint32_t)h << 16;
  float f;
  memcpy(&f, &b, 4);
  return f;
}
TLMC_HELPER uint16_t tlmc_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (uint16_t)(x >> 16);
}
TLMC_HELPER float tlmc_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, b;
  float f;
  if (e == 0) {
    f = (float)m * (1.0f / 16777216.0f);
    return sign ? -f : f;
  }
  b = sign | (e == 0x1f ? 0x7f800000u | (m << 13) : ((e + 112u) << 23) | (m << 13));
  memcpy(&f, &b, 4);
  return f;
}
TLMC_HELPER uint16_t tlmc_f32_to_f16(float f) {
  uint32_t x, sign, exp, man, h, rest;
  int e;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000u;
  exp = (x >> 23) & 0xffu;
  man = x & 0x7fffffu;
  if (exp == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
  e = (int)exp - 127 + 15;
  if (e >= 0x1f) return (uint16_t)(sign | 0x7c00u);
  if (e <= 0) {
    int shift;
    uint32_t half;
    if (e < -10) return (uint16_t)sign;
    man |= 0x800000u;
    shift = 14 - e;
    h = man >> shift;
    rest = man & ((1u << shift) - 1);
    half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1))) ++h;
    return (uint16_t)(sign | h);
  }
  h = sign | ((uint32_t)e << 10) | (man >> 13);
  rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) ++h;
  return (uint16_t)h;
}
)";
}

std::string scalar_helpers(bool hide_minimum) {
  std::string s = R"(TLMC_HELPER int64_t tlmc_floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
TLMC_HELPER int64_t tlmc_floormod(int64_t a, int64_t b) { return a - tlmc_floordiv(a, b) * b; }
/* Integer Div never traps: by zero it gives 0, and min / -1 wraps (as the reference does). */
TLMC_HELPER int64_t tlmc_divi(int64_t a, int64_t b) {
  return b == 0 ? 0 : b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}
)";
  s +=
      hide_minimum
          ? R"(/* The empty asm hides the minimum from the optimiser: clang 14's loop vectoriser, with
   512-bit vectors, miscompiled a loop whose conditional loads were indexed by a shifted
   tile's start min(o * t, extent - t) of an outer loop. It is still computed once per
   outer iteration. */
TLMC_HELPER int64_t tlmc_mini(int64_t a, int64_t b) {
  int64_t r = a < b ? a : b;
  __asm__("" : "+r"(r));
  return r;
}
)"
          : "TLMC_HELPER int64_t tlmc_mini(int64_t a, int64_t b) { return a < b ? a : b; }\n";
  return s + R"(TLMC_HELPER int64_t tlmc_maxi(int64_t a, int64_t b) { return a > b ? a : b; }
/* NaN-propagating, as ONNX's Max/Relu: a NaN in `a` stays. */
TLMC_HELPER float tlmc_fminf(float a, float b) { return b < a ? b : a; }
TLMC_HELPER float tlmc_fmaxf(float a, float b) { return b > a ? b : a; }
TLMC_HELPER double tlmc_fmin(double a, double b) { return b < a ? b : a; }
TLMC_HELPER double tlmc_fmax(double a, double b) { return b > a ? b : a; }
)";
}

}  // namespace tlmc::codegen
