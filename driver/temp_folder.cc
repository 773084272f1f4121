#include "driver/temp_folder.h"

#include <stdlib.h>

#include <filesystem>

#include "ir/diagnostic.h"

namespace tlmc::driver {

TempFolder::TempFolder(const std::string& prefix)
    : path_((std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string()) {
  if (!mkdtemp(path_.data())) throw InternalError("cannot create a temporary folder " + path_);
}

TempFolder::~TempFolder() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace tlmc::driver
