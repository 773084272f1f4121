// Element types of tensors, with their names in the model formats and in generated C.
// Every other part of tlmc names a type through this enum; nothing assumes float32.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tlmc::ir {

// Float64 is last: the language model's vocabulary numbers the types in this order.
enum class DType { Float32, Float16, BFloat16, Int32, Int64, Int8, UInt8, Bool, Float64 };

size_t dtype_size(DType t);
// The spelling used by spec/graph-yaml.md ("float32", "int64", ...).
std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
// The C type generated code uses for one element.
std::string_view dtype_c_type(DType t);
bool dtype_is_float(DType t);
// float16 and bfloat16: stored as 16 bits, computed as float32.
bool dtype_is_half(DType t);
// The bytes of an element as a kernel computes it: float32's for float16 and bfloat16, so
// that their vectors are float32's; the type's own size otherwise.
size_t compute_size(DType t);

// Conversions of the 16-bit floats: to them rounded to nearest even (NaN kept, overflow to
// infinity), and back exactly.
uint16_t float_to_bfloat16(float f);
uint16_t float_to_half(float f);
float bfloat16_to_float(uint16_t h);
float half_to_float(uint16_t h);
// An element of the 16-bit float type t (float16 or bfloat16) from its bits, exactly.
float sixteen_bit_to_float(DType t, uint16_t bits);
// One unit in the last place of type t relative to the value's power of two: 2^-7 for
// bfloat16, 2^-10 for float16; 0 for the other types (a float32 result is compared as such).
double half_last_place(DType t);

}  // namespace tlmc::ir
