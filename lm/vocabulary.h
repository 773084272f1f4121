// The tensor language's vocabulary (one versioned definition): special and structural tokens,
// one token per number 0..kLargestSpaceValue (every value a decision space can list), the
// space kinds and sketch names the scheduler's rules can produce, and the words of names.
#pragma once

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
  // The token of a text that must exist (an internal error otherwise).
  Token at(std::string_view text) const;
  // The token of a number 0..kLargestSpaceValue.
  Token number(int64_t value) const;
  // The number a token stands for; nullopt for other tokens.
  std::optional<int64_t> value_of(Token t) const;
  // A 64-bit hash of every token's text in order: checkpoints carry it.
  uint64_t fingerprint() const { return fingerprint_; }

  static constexpr Token kPad = 0, kBos = 1, kEos = 2, kUnk = 3;

 private:
  Vocabulary();
  void add(std::string text);
  std::vector<std::string> texts_;
  std::unordered_map<std::string, Token> ids_;
  Token first_number_ = 0;
  uint64_t fingerprint_ = 0;
};

}  // namespace tlmc::lm
