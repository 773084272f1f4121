// Where an ONNX tensor's external data lives: the file its `location` names, relative to the
// model's folder, opened once and checked, through the descriptor, to be a regular file
// inside that folder (no absolute path, no `..`, no symlink leading elsewhere).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <variant>

namespace tlmc::frontend {

struct RefusedLocation {
  std::string reason;  // follows "its external data ": "names '../w.bin', which leads out ..."
};

// An open external-data file; every read goes through this descriptor, so the file checked
// is the file read even if its name is replaced meanwhile.
class ExternalDataFile {
 public:
  ExternalDataFile(int fd, std::filesystem::path named, uint64_t size)
      : fd_(fd), named_(std::move(named)), size_(size) {}
  ExternalDataFile(ExternalDataFile&& o) noexcept
      : fd_(o.fd_), named_(std::move(o.named_)), size_(o.size_) {
    o.fd_ = -1;
  }
  ExternalDataFile(const ExternalDataFile&) = delete;
  ExternalDataFile& operator=(const ExternalDataFile&) = delete;
  ExternalDataFile& operator=(ExternalDataFile&&) = delete;
  ~ExternalDataFile();

  const std::filesystem::path& named() const { return named_; }  // folder / location
  uint64_t size() const { return size_; }
  // Reads `bytes` bytes at `offset` into `out`; false on a read error or a short read.
  bool read(uint64_t offset, void* out, uint64_t bytes) const;

 private:
  int fd_;
  std::filesystem::path named_;
  uint64_t size_;
};

// model_path: the .onnx file as the user named it; location: the external data's entry.
std::variant<ExternalDataFile, RefusedLocation> open_external_data(
    const std::filesystem::path& model_path, const std::string& location);

}  // namespace tlmc::frontend
