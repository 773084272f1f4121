#include "ir/dtype.h"

#include <array>
#include <cstring>

namespace tlmc::ir {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  std::string_view c_type;
  size_t size;
};

constexpr std::array<DTypeInfo, 9> kInfo = {{
    {DType::Float32, "float32", "float", 4},
    {DType::Float16, "float16", "uint16_t", 2},
    {DType::BFloat16, "bfloat16", "uint16_t", 2},
    {DType::Int32, "int32", "int32_t", 4},
    {DType::Int64, "int64", "int64_t", 8},
    {DType::Int8, "int8", "int8_t", 1},
    {DType::UInt8, "uint8", "uint8_t", 1},
    {DType::Bool, "bool", "uint8_t", 1},
    {DType::Float64, "float64", "double", 8},
}};

const DTypeInfo& info(DType t) { return kInfo[static_cast<size_t>(t)]; }

}  // namespace

size_t dtype_size(DType t) { return info(t).size; }
std::string_view dtype_name(DType t) { return info(t).name; }
std::string_view dtype_c_type(DType t) { return info(t).c_type; }
bool dtype_is_float(DType t) {
  return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16 || t == DType::Float64;
}

bool dtype_is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

size_t compute_size(DType t) { return dtype_is_half(t) ? 4 : dtype_size(t); }

float sixteen_bit_to_float(DType t, uint16_t bits) {
  return t == DType::BFloat16 ? bfloat16_to_float(bits) : half_to_float(bits);
}

double half_last_place(DType t) {
  return t == DType::BFloat16 ? 1.0 / 128 : t == DType::Float16 ? 1.0 / 1024 : 0;
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& i : kInfo)
    if (i.name == name) return i.type;
  return std::nullopt;
}

// Round to nearest, ties to even; NaN stays NaN (quiet), infinities and overflow give
// infinity, values below half the smallest subnormal give a signed zero.
uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xffu;
  uint32_t man = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (man ? 0x200u : 0));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {  // a half subnormal, or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    man |= 0x800000u;
    const int shift = 14 - e;
    uint32_t h = man >> shift;
    const uint32_t rest = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rest > half || (rest == half && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (man >> 13);
  const uint32_t rest = man & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) ++h;  // may carry up to infinity
  return static_cast<uint16_t>(h);
}

uint16_t float_to_bfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

float bfloat16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1u, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: man * 2^-24, exact in float
    const float f = static_cast<float>(man) / 16777216.0f;
    return sign ? -f : f;
  }
  const uint32_t bits =
      (sign << 31) | (exp == 0x1f ? 0x7f800000u | (man << 13) : ((exp + 112) << 23) | (man << 13));
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace tlmc::ir
