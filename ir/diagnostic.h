// The three kinds of failure (STYLE.md §6). A user's mistake is a Diagnostic carrying the
// position it concerns; a compiler bug is an InternalError raised by TLMC_ASSERT. Invalid
// schedule proposals are typed errors of their own (scheduler/decision.h).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace tlmc {

struct SourceLoc {
  std::string file;  // empty when unknown
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown
};

// A mistake in the user's input. Printed as "file:line:col: error: message".
class Diagnostic : public std::runtime_error {
 public:
  Diagnostic(SourceLoc loc, const std::string& message);
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }
  // "file:line:col: error: message", or "tlmc: error: message" without a position.
  std::string format() const;

 private:
  SourceLoc loc_;
  std::string message_;
};

// A broken invariant inside the compiler.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

[[noreturn]] void fail_assert(const char* cond, const char* file, int line,
                              const std::string& what);

}  // namespace tlmc

#define TLMC_ASSERT(cond, what)                                              \
  do {                                                                       \
    if (!(cond)) {                                                           \
      std::ostringstream tlmc_assert_os_;                                    \
      tlmc_assert_os_ << what;                                               \
      ::tlmc::fail_assert(#cond, __FILE__, __LINE__, tlmc_assert_os_.str()); \
    }                                                                        \
  } while (0)
