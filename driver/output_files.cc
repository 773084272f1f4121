#include "driver/output_files.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "ir/diagnostic.h"

namespace tlmc::driver {

namespace fs = std::filesystem;

StagingDir::StagingDir(const fs::path& near) {
  fs::path parent = near.empty() ? fs::current_path() : near;
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string templ = (parent / ".tlmc-XXXXXX").string();
  if (!mkdtemp(templ.data()))
    throw Diagnostic({parent.string()}, "cannot create a temporary folder here");
  path_ = templ;
}

StagingDir::~StagingDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_files(const std::vector<codegen::GeneratedFile>& files, const fs::path& dir) {
  for (const codegen::GeneratedFile& f : files) {
    std::ofstream out(dir / f.name, std::ios::binary);
    out.write(f.contents.data(), static_cast<std::streamsize>(f.contents.size()));
    if (!out) throw Diagnostic({(dir / f.name).string()}, "cannot write the file");
  }
}

void replace_file(const fs::path& path, const std::string& text, const std::string& what) {
  const fs::path temp = path.string() + ".tmp";
  {
    std::ofstream f(temp, std::ios::trunc);
    if (!(f << text) || !f.flush()) throw Diagnostic({path.string()}, "cannot write " + what);
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) throw Diagnostic({path.string()}, "cannot write " + what);
}

namespace {
bool same_bytes(const fs::path& a, const fs::path& b) {
  std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
  return std::equal(std::istreambuf_iterator<char>(x), std::istreambuf_iterator<char>(),
                    std::istreambuf_iterator<char>(y), std::istreambuf_iterator<char>());
}

}  // namespace

void commit(const std::vector<std::pair<fs::path, fs::path>>& moves) {
  for (const auto& [from, to] : moves) {
    std::error_code ec;
    if (fs::is_directory(to, ec))
      throw Diagnostic({to.string()}, "is a folder; cannot write the output file there");
  }
  for (const auto& [from, to] : moves) {
    std::error_code ec;
    // An unchanged file is left alone, so that what includes or links it is not rebuilt.
    if (fs::exists(to, ec) && fs::file_size(to, ec) == fs::file_size(from, ec) &&
        same_bytes(from, to))
      continue;
    fs::rename(from, to, ec);
    if (ec) {
      fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
      if (ec) throw Diagnostic({to.string()}, "cannot write the output: " + ec.message());
    }
  }
}

}  // namespace tlmc::driver
