#include "lm/sentence_file.h"

#include <cstdio>
#include <cstring>
#include <fstream>

namespace tlmc::lm {
namespace {

constexpr char kMagic[8] = {'T', 'L', 'M', 'C', 'S', 'E', 'N', '\n'};

template <typename T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(T));
}

class Reader {
 public:
  Reader(std::string path, std::string bytes) : path_(std::move(path)), bytes_(std::move(bytes)) {}
  template <typename T>
  T get() {
    if (at_ + sizeof(T) > bytes_.size())
      throw CheckpointError(path_ + ": the sentence file is truncated");
    T value;
    std::memcpy(&value, bytes_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return value;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::string path_, bytes_;
  size_t at_ = 0;
};

Token checked(Token t, const std::string& path) {
  if (t < 0 || static_cast<size_t>(t) >= Vocabulary::get().size())
    throw CheckpointError(path + ": the sentence file has a token outside the vocabulary");
  return t;
}

}  // namespace

void write_sentences(const std::string& path, const std::vector<Sentence>& sentences) {
  std::string out(kMagic, sizeof(kMagic));
  put(out, kSentenceFileVersion);
  put(out, kLanguageVersion);
  put(out, Vocabulary::get().fingerprint());
  put(out, static_cast<uint64_t>(sentences.size()));
  for (const Sentence& s : sentences) {
    put(out, static_cast<uint32_t>(s.tokens.size()));
    for (Token t : s.tokens) put(out, static_cast<uint16_t>(t));
    for (const std::vector<Token>& c : s.choices) {
      put(out, static_cast<uint16_t>(c.size()));
      for (Token t : c) put(out, static_cast<uint16_t>(t));
    }
  }
  const std::string temp = path + ".tmp";
  {
    std::ofstream f(temp, std::ios::binary | std::ios::trunc);
    if (!f.write(out.data(), static_cast<std::streamsize>(out.size())) || !f.flush()) {
      std::remove(temp.c_str());
      throw CheckpointError(path + ": cannot write the sentence file");
    }
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    std::remove(temp.c_str());
    throw CheckpointError(path + ": cannot replace the sentence file");
  }
}

std::vector<Sentence> read_sentences(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw CheckpointError(path + ": cannot open the sentence file");
  Reader in(path, std::string(std::istreambuf_iterator<char>(f), {}));
  char magic[sizeof(kMagic)];
  for (char& c : magic) c = in.get<char>();
  if (std::memcmp(magic, kMagic, sizeof(kMagic)) != 0)
    throw CheckpointError(path + ": not a tlmc sentence file");
  if (in.get<uint32_t>() != kSentenceFileVersion)
    throw CheckpointError(path + ": a sentence file of another format version");
  if (in.get<uint32_t>() != kLanguageVersion ||
      in.get<uint64_t>() != Vocabulary::get().fingerprint())
    throw CheckpointError(path + ": sentences of another tensor language (sample them again)");
  const auto count = in.get<uint64_t>();
  std::vector<Sentence> out;
  for (uint64_t i = 0; i < count; ++i) {
    Sentence s;
    const auto n = in.get<uint32_t>();
    for (uint32_t t = 0; t < n; ++t) s.tokens.push_back(checked(in.get<uint16_t>(), path));
    s.choices.resize(n);
    for (uint32_t t = 0; t < n; ++t) {
      const auto k = in.get<uint16_t>();
      for (uint16_t j = 0; j < k; ++j) s.choices[t].push_back(checked(in.get<uint16_t>(), path));
    }
    out.push_back(std::move(s));
  }
  if (!in.done()) throw CheckpointError(path + ": the sentence file has trailing bytes");
  return out;
}

}  // namespace tlmc::lm
