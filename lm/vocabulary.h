// The tensor language's vocabulary (one versioned definition): special and structural tokens,
// one token per number 0..kLargestSpaceValue (every value a decision space can list), the
// space kinds and sketch names the scheduler's rules can produce, and the words of names;
// then the words only CUDA targets' sentences use (their descriptor's, their sketches' names
// and their spaces' axis words).
//
// Tokens are only ever appended: a model knows the first N tokens of the language (N is its
// configuration's vocabulary size, checked by the fingerprint of those N), and a token it
// does not know reads as <unk> to it. So the CPU model, trained before the CUDA words
// existed, reads CPU sentences exactly as it did, and a model for CUDA targets knows them all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tlmc::lm {

// Bumped whenever a token is added, removed or renumbered, or a sentence is written
// differently: models trained on another version are refused.
constexpr uint32_t kLanguageVersion = 1;

using Token = int32_t;

class Vocabulary {
 public:
  // The one vocabulary (built once, from the scheduler's spaces and rules and the operators).
  static const Vocabulary& get();

  size_t size() const { return texts_.size(); }
  const std::string& text(Token t) const { return texts_.at(static_cast<size_t>(t)); }
  // The token of a text; nullopt when the vocabulary has none.
  std::optional<Token> find(std::string_view text) const;
  // The same among the first `limit` tokens only.
  std::optional<Token> find(std::string_view text, size_t limit) const;
  // The token of a text that must exist (an internal error otherwise).
  Token at(std::string_view text) const;
  // The token of a number 0..kLargestSpaceValue.
  Token number(int64_t value) const;
  // The number a token stands for; nullopt for other tokens.
  std::optional<int64_t> value_of(Token t) const;
  // A 64-bit hash of the first `n` tokens' texts in order (all of them by default):
  // checkpoints and sentence files carry it.
  uint64_t fingerprint() const { return prefix_fingerprints_.back(); }
  uint64_t fingerprint(size_t n) const { return prefix_fingerprints_.at(n); }
  // The n whose fingerprint(n) this is; nullopt for a language this tlmc does not speak.
  std::optional<size_t> known_prefix(uint64_t fingerprint) const;
  // The tokens of CPU targets' sentences: those before the CUDA words. A CPU prompt looks
  // its words up among these only, so that it reads as it did before the CUDA words existed.
  size_t cpu_size() const { return cpu_size_; }
  // Whether only CUDA targets' sentences use the token (a word both kinds use is a CPU one).
  bool cuda_only(Token t) const {
    return t >= 0 && static_cast<size_t>(t) < cuda_only_.size() &&
           cuda_only_[static_cast<size_t>(t)];
  }

  static constexpr Token kPad = 0, kBos = 1, kEos = 2, kUnk = 3;

 private:
  Vocabulary();
  void add(std::string text);
  std::vector<std::string> texts_;
  std::unordered_map<std::string, Token> ids_;
  Token first_number_ = 0;
  size_t cpu_size_ = 0;
  std::vector<bool> cuda_only_;                // [token]
  std::vector<uint64_t> prefix_fingerprints_;  // [n]: of the first n tokens
};

// The tokens a model knows (lm/gpt.h, Gpt::known_words): the language's first `count`, less
// the CUDA-only words for a model of CPU targets' sentences. A model of CPU targets grown to
// the whole vocabulary (`tlmc lm finetune`) thus still cannot name a CUDA sketch.
struct KnownWords {
  size_t count = SIZE_MAX;
  bool cuda = true;
  bool has(Token t) const {
    return t >= 0 && static_cast<size_t>(t) < count && (cuda || !Vocabulary::get().cuda_only(t));
  }
};

}  // namespace tlmc::lm
