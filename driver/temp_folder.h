// A new folder under the system's temporary directory (named PREFIX-XXXXXX), removed with
// everything in it when the object goes: where --check and --profile build their library.
#pragma once

#include <string>

namespace tlmc::driver {

class TempFolder {
 public:
  explicit TempFolder(const std::string& prefix);  // throws InternalError when it cannot
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tlmc::driver
