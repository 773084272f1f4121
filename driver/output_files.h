// Writing outputs all or nothing: files are made in a staging folder beside their
// destination and renamed into place only when every one of them exists.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "codegen/emit_c.h"

namespace tlmc::driver {

// A temporary folder inside `near` (created if needed), removed with everything in it when
// the object dies.
class StagingDir {
 public:
  explicit StagingDir(const std::filesystem::path& near);
  ~StagingDir();
  StagingDir(const StagingDir&) = delete;
  StagingDir& operator=(const StagingDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

void write_files(const std::vector<codegen::GeneratedFile>& files,
                 const std::filesystem::path& dir);

// Writes `text` to `path` through a temporary file beside it, renamed into place: a reader
// finds the old file or the whole new one, never a part. Throws a Diagnostic at `path`
// ("cannot write `what`") when it cannot.
void replace_file(const std::filesystem::path& path, const std::string& text,
                  const std::string& what);

// Moves staged files (from, to) into place; every check comes first, so a failure moves
// nothing. A destination with the same bytes is left alone (and its time stamp), so that
// what includes or links it is not rebuilt.
void commit(const std::vector<std::pair<std::filesystem::path, std::filesystem::path>>& moves);

}  // namespace tlmc::driver
