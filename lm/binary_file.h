// The language model's binary files (model checkpoints, sentence files): an 8-byte magic and
// a format version, values in the host's byte order, written whole through a temporary file
// or not at all, and read back with every read checked against the file's length.
#pragma once

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "lm/checkpoint.h"  // CheckpointError

namespace tlmc::lm {

// Replaces `path` with `bytes` through a temporary file renamed over it: whole or not at all
// (the temporary removed on failure). Returns "" or what went wrong, for the caller's error:
// "cannot write the NOUN", "writing the NOUN failed (disk full?)", "cannot replace the NOUN".
std::string write_whole_file(const std::string& path, const std::string& bytes,
                             const std::string& noun);

class BinaryWriter {
 public:
  // `noun` names the kind of file in messages ("model file").
  BinaryWriter(const char (&magic)[8], uint32_t version, std::string noun);
  template <typename T>
  void put(const T& value) {
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  void put_floats(const std::vector<float>& values) {
    bytes_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(float));
  }
  // A byte string: its length (uint64_t), then its bytes.
  void put_string(std::string_view s) {
    put<uint64_t>(s.size());
    bytes_.append(s.data(), s.size());
  }
  // What write() would write.
  const std::string& bytes() const { return bytes_; }
  // Replaces `path` with what was put; CheckpointError when it cannot.
  void write(const std::string& path) const;

 private:
  std::string noun_, bytes_;
};

class BinaryReader {
 public:
  // Reads the whole file; CheckpointError when it cannot be opened (`cannot_open` says what to
  // do) or does not begin with `magic`. The format version is left for the caller to check.
  BinaryReader(const std::string& path, const char (&magic)[8], std::string noun,
               const std::string& cannot_open);
  // The same over bytes in memory; `name` stands for the path in messages.
  BinaryReader(const std::string& name, std::string bytes, const char (&magic)[8],
               std::string noun);
  template <typename T>
  T get() {
    T value{};
    std::memcpy(&value, take(sizeof(T)), sizeof(T));
    return value;
  }
  std::vector<float> floats(size_t n);
  // A byte string as put_string wrote it.
  std::string string();
  // CheckpointError when bytes are left after the last value read.
  void expect_end() const;

 private:
  const char* take(size_t bytes);  // CheckpointError when fewer are left
  std::string path_, noun_, bytes_;
  size_t at_ = 0;
};

}  // namespace tlmc::lm
