#include "lm/sentence_file.h"

#include "lm/binary_file.h"

namespace tlmc::lm {
namespace {

constexpr char kMagic[8] = {'T', 'L', 'M', 'C', 'S', 'E', 'N', '\n'};

Token checked(Token t, size_t vocabulary, const std::string& path) {
  if (t < 0 || static_cast<size_t>(t) >= vocabulary)
    throw CheckpointError(path + ": the sentence file has a token outside the vocabulary");
  return t;
}

}  // namespace

void write_sentences(const std::string& path, const std::vector<Sentence>& sentences) {
  BinaryWriter out(kMagic, kSentenceFileVersion, "sentence file");
  out.put(kLanguageVersion);
  out.put(Vocabulary::get().fingerprint());
  out.put(static_cast<uint64_t>(sentences.size()));
  for (const Sentence& s : sentences) {
    out.put(static_cast<uint32_t>(s.tokens.size()));
    for (Token t : s.tokens) out.put(static_cast<uint16_t>(t));
    for (const std::vector<Token>& c : s.choices) {
      out.put(static_cast<uint16_t>(c.size()));
      for (Token t : c) out.put(static_cast<uint16_t>(t));
    }
  }
  out.write(path);
}

std::vector<Sentence> read_sentences(const std::string& path) {
  BinaryReader in(path, kMagic, "sentence file", "cannot open the sentence file");
  if (in.get<uint32_t>() != kSentenceFileVersion)
    throw CheckpointError(path + ": a sentence file of another format version");
  const auto language = in.get<uint32_t>();
  // Written by this tlmc or by one before the language gained tokens (lm/vocabulary.h).
  const std::optional<size_t> vocabulary = Vocabulary::get().known_prefix(in.get<uint64_t>());
  if (language != kLanguageVersion || !vocabulary)
    throw CheckpointError(path + ": sentences of another tensor language (sample them again)");
  const auto count = in.get<uint64_t>();
  std::vector<Sentence> out;
  for (uint64_t i = 0; i < count; ++i) {
    Sentence s;
    const auto n = in.get<uint32_t>();
    for (uint32_t t = 0; t < n; ++t)
      s.tokens.push_back(checked(in.get<uint16_t>(), *vocabulary, path));
    s.choices.resize(n);
    for (uint32_t t = 0; t < n; ++t) {
      const auto k = in.get<uint16_t>();
      for (uint16_t j = 0; j < k; ++j)
        s.choices[t].push_back(checked(in.get<uint16_t>(), *vocabulary, path));
    }
    out.push_back(std::move(s));
  }
  in.expect_end();
  return out;
}

}  // namespace tlmc::lm
