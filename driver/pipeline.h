// What the steps of the compile pipeline (driver/compile.cc) share: whether --dump asks
// for a level, and -v's timing of each step.
#pragma once

#include <chrono>
#include <ostream>
#include <string>

#include "driver/compile.h"

namespace tlmc::driver {

// Whether --dump lists `what`.
inline bool wants(const CompileOptions& o, const std::string& what) {
  for (const std::string& d : o.dumps)
    if (d == what) return true;
  return false;
}

// Times one step of the pipeline for -v.
class PassTimer {
 public:
  PassTimer(const CompileOptions& o, const char* name)
      : o_(o), name_(name), t0_(std::chrono::steady_clock::now()) {}
  ~PassTimer() {
    if (!o_.log_stream) return;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
    *o_.log_stream << "tlmc: " << name_ << ": " << ms << " ms\n";
  }

 private:
  const CompileOptions& o_;
  const char* name_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace tlmc::driver
