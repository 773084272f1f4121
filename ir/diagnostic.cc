#include "ir/diagnostic.h"

namespace tlmc {

Diagnostic::Diagnostic(SourceLoc loc, const std::string& message)
    : std::runtime_error(message), loc_(std::move(loc)), message_(message) {}

std::string Diagnostic::format() const {
  if (loc_.file.empty()) return "tlmc: error: " + message_;
  std::string out = loc_.file;
  if (loc_.line > 0) out += ":" + std::to_string(loc_.line) + ":" + std::to_string(loc_.column);
  return out + ": error: " + message_;
}

void fail_assert(const char* cond, const char* file, int line, const std::string& what) {
  throw InternalError(std::string("internal error at ") + file + ":" + std::to_string(line) +
                      ": assertion `" + cond + "` failed: " + what);
}

}  // namespace tlmc
