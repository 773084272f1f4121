#include "ir/dtype.h"

#include <array>

namespace tlmc::ir {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  std::string_view c_type;
  size_t size;
};

constexpr std::array<DTypeInfo, 8> kInfo = {{
    {DType::Float32, "float32", "float", 4},
    {DType::Float16, "float16", "uint16_t", 2},
    {DType::BFloat16, "bfloat16", "uint16_t", 2},
    {DType::Int32, "int32", "int32_t", 4},
    {DType::Int64, "int64", "int64_t", 8},
    {DType::Int8, "int8", "int8_t", 1},
    {DType::UInt8, "uint8", "uint8_t", 1},
    {DType::Bool, "bool", "uint8_t", 1},
}};

const DTypeInfo& info(DType t) { return kInfo[static_cast<size_t>(t)]; }

}  // namespace

size_t dtype_size(DType t) { return info(t).size; }
std::string_view dtype_name(DType t) { return info(t).name; }
std::string_view dtype_c_type(DType t) { return info(t).c_type; }
bool dtype_is_float(DType t) {
  return t == DType::Float32 || t == DType::Float16 || t == DType::BFloat16;
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeInfo& i : kInfo)
    if (i.name == name) return i.type;
  return std::nullopt;
}

}  // namespace tlmc::ir
