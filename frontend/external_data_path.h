// Where an ONNX tensor's external data lives: the file its `location` names, relative to the
// model's folder, checked to stay inside that folder (no absolute path, no `..`, no symlink
// leading elsewhere). Returns the path to read, or the reason it is refused.
#pragma once

#include <filesystem>
#include <string>
#include <variant>

namespace tlmc::frontend {

struct RefusedLocation {
  std::string reason;  // follows "its external data ": "names '../w.bin', which leads out ..."
};

// model_path: the .onnx file as the user named it; location: the external data's entry.
std::variant<std::filesystem::path, RefusedLocation> external_data_path(
    const std::filesystem::path& model_path, const std::string& location);

}  // namespace tlmc::frontend
