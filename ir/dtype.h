// Element types of tensors, with their names in the model formats and in generated C.
// Every other part of tlmc names a type through this enum; nothing assumes float32.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace tlmc::ir {

enum class DType { Float32, Float16, BFloat16, Int32, Int64, Int8, UInt8, Bool };

size_t dtype_size(DType t);
// The spelling used by spec/graph-yaml.md ("float32", "int64", ...).
std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view name);
// The C type generated code uses for one element.
std::string_view dtype_c_type(DType t);
bool dtype_is_float(DType t);

}  // namespace tlmc::ir
