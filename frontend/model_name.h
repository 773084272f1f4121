// Model names: the C prefix of a generated API must be a C identifier.
#pragma once

#include <string>

namespace tlmc::frontend {

bool is_c_identifier(const std::string& s);
// The name of a model without one: `text` (a file's stem, a graph's name) with every
// character that may not appear in a C identifier replaced by '_', and "model_" in front
// when it would start with a digit; "model" when empty.
std::string c_identifier_from(const std::string& text);
// c_identifier_from the stem of `path`.
std::string name_from_path(const std::string& path);

}  // namespace tlmc::frontend
