#include "frontend/external_data_path.h"

#include <system_error>

namespace tlmc::frontend {
namespace {

namespace fs = std::filesystem;

// True when `inner` is `outer` or lies below it; both absolute and free of `.` and `..`.
bool lies_within(const fs::path& inner, const fs::path& outer) {
  auto i = inner.begin();
  for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // the trailing empty part of "dir/"
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

}  // namespace

// The rule: a model's external data is part of the model, so it lives in the model's folder
// or below it. A downloaded model must not be able to name ~/.ssh/id_rsa, whether by an
// absolute path, by `..`, or by a symlink it ships. Symlinks are followed only where they
// stay within the model's folder, taken either as the user named it or as the folder the
// model file itself resolves into: model caches (Hugging Face's among them) keep the model
// file and its data as symlinks into one blobs folder, so there the data is beside the
// model's real file, and a link elsewhere is refused all the same.
std::variant<fs::path, RefusedLocation> external_data_path(const fs::path& model_path,
                                                           const std::string& location) {
  if (location.empty()) return RefusedLocation{"names no location"};
  const fs::path rel(location);
  if (rel.is_absolute() || rel.has_root_name() || rel.has_root_directory())
    return RefusedLocation{"names the absolute path '" + location +
                           "': external data must be named relative to the model's folder"};
  for (const fs::path& part : rel)
    if (part == "..")
      return RefusedLocation{"names '" + location +
                             "', which leads out of the model's folder through '..'"};
  std::error_code ec;
  const fs::path named_dir = fs::absolute(model_path, ec).parent_path();
  const fs::path file = named_dir / rel;
  if (!fs::is_regular_file(file, ec))
    return RefusedLocation{"names '" + location + "', which does not exist (looked for '" +
                           file.string() + "')"};
  const fs::path real_file = fs::canonical(file, ec);
  if (ec)
    return RefusedLocation{"names '" + location + "', which cannot be resolved: " + ec.message()};
  std::error_code named_ec, model_ec;
  const fs::path real_named_dir = fs::canonical(named_dir, named_ec);
  const fs::path real_model_dir = fs::canonical(model_path, model_ec).parent_path();
  if (named_ec || model_ec)
    return RefusedLocation{"cannot be checked: the model's own path does not resolve (" +
                           (named_ec ? named_ec : model_ec).message() + ")"};
  if (lies_within(real_file, real_named_dir) || lies_within(real_file, real_model_dir)) return file;
  return RefusedLocation{"names '" + location + "', a symlink to '" + real_file.string() +
                         "', outside the model's folder: copy the file into the folder instead"};
}

}  // namespace tlmc::frontend
