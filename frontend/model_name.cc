#include "frontend/model_name.h"

#include <filesystem>

namespace tlmc::frontend {
namespace {
bool letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
}  // namespace

bool is_c_identifier(const std::string& s) {
  if (s.empty() || !letter(s[0])) return false;
  for (char c : s)
    if (!letter(c) && !digit(c)) return false;
  return true;
}

std::string c_identifier_from(const std::string& text) {
  if (text.empty()) return "model";
  std::string out = text;
  for (char& c : out)
    if (!letter(c) && !digit(c)) c = '_';
  if (digit(out[0])) out = "model_" + out;
  return out;
}

std::string name_from_path(const std::string& path) {
  return c_identifier_from(std::filesystem::path(path).stem().string());
}

}  // namespace tlmc::frontend
