#include "lm/binary_file.h"

#include <cstdio>
#include <fstream>
#include <iterator>

namespace tlmc::lm {

BinaryWriter::BinaryWriter(const char (&magic)[8], uint32_t version, std::string noun)
    : noun_(std::move(noun)), bytes_(magic, sizeof(magic)) {
  put(version);
}

std::string write_whole_file(const std::string& path, const std::string& bytes,
                             const std::string& noun) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return "cannot write the " + noun;
    if (!out.write(bytes.data(), static_cast<std::streamsize>(bytes.size())) || !out.flush()) {
      std::remove(temp.c_str());
      return "writing the " + noun + " failed (disk full?)";
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    return "cannot replace the " + noun;
  }
  return "";
}

void BinaryWriter::write(const std::string& path) const {
  const std::string error = write_whole_file(path, bytes_, noun_);
  if (!error.empty()) throw CheckpointError(path + ": " + error);
}

namespace {

std::string file_bytes(const std::string& path, const std::string& cannot_open) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError(path + ": " + cannot_open);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

BinaryReader::BinaryReader(const std::string& path, const char (&magic)[8], std::string noun,
                           const std::string& cannot_open)
    : BinaryReader(path, file_bytes(path, cannot_open), magic, std::move(noun)) {}

BinaryReader::BinaryReader(const std::string& name, std::string bytes, const char (&magic)[8],
                           std::string noun)
    : path_(name), noun_(std::move(noun)), bytes_(std::move(bytes)) {
  if (bytes_.size() < sizeof(magic) || std::memcmp(bytes_.data(), magic, sizeof(magic)) != 0)
    throw CheckpointError(path_ + ": not a tlmc " + noun_);
  at_ = sizeof(magic);
}

const char* BinaryReader::take(size_t bytes) {
  if (bytes > bytes_.size() - at_)
    throw CheckpointError(path_ + ": the " + noun_ + " is truncated");
  at_ += bytes;
  return bytes_.data() + at_ - bytes;
}

std::string BinaryReader::string() {
  const auto n = get<uint64_t>();
  const char* from = take(n);  // checked against the length first
  return std::string(from, n);
}

std::vector<float> BinaryReader::floats(size_t n) {
  // The length is checked before anything is allocated: a damaged count cannot ask for more
  // memory than the file holds.
  if (n > (bytes_.size() - at_) / sizeof(float))
    throw CheckpointError(path_ + ": the " + noun_ + " is truncated");
  std::vector<float> values(n);
  const void* from = take(n * sizeof(float));
  if (n) std::memcpy(values.data(), from, n * sizeof(float));  // no null pointer, even for 0
  return values;
}

void BinaryReader::expect_end() const {
  if (at_ != bytes_.size()) throw CheckpointError(path_ + ": the " + noun_ + " has trailing bytes");
}

}  // namespace tlmc::lm
