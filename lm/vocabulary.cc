#include "lm/vocabulary.h"

#include <algorithm>
#include <cctype>
#include <memory>

#include "ir/diagnostic.h"
#include "ir/dtype.h"
#include "ir/op_schema.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"

namespace tlmc::lm {
namespace {

// The words of a sentence's structure (lm/tensor_sentence.cc writes them).
const char* const kStructure[] = {"stage", "red",  "sum",  "max",  "min",   "load", "input",
                                  "const", "temp", "dim",  "*",    "+",     "?",    "num2",
                                  "num3",  "hw",   "isa",  "vec",  "cores", "l1d",  "l2",
                                  "l3",    "cpu",  "warm", "cold", "-",     ".",    "sketch"};

// Words of stage and axis names: the suffixes lowering gives stages, the roles the sketch
// rules name them by, and the axis names of the operators' lowerings. A word not listed
// reads as <unk>: it costs the model information, never validity.
const char* const kNameWords[] = {
    "out",   "ew",    "reduce", "pad", "local",   "rf",   "cache",  "acc",   "cl",
    "i",     "j",     "k",      "r",   "n",       "c",    "h",      "w",     "o",
    "oc",    "ic",    "oh",     "ow",  "kh",      "kw",   "g",      "b",     "d",
    "p",     "s",     "x",      "y",   "t",       "in",   "mm",     "sqsum", "axis",
    "group", "shape", "intel",  "amd", "generic", "avx2", "avx512", "x86"};

// The words only CUDA targets' sentences use: their descriptor's (lm/tensor_sentence.cc) and
// the axis words of their spaces ("i.threads", "k.step", "j.reg") and stage roles.
const char* const kGpuWords[] = {"gpu",  "sm", "sms",  "warp", "threads", "blocks", "regs",
                                 "smem", "bw", "peak", "reg",  "step",    "shared"};

// CUDA axis words of spaces added after the bundled CUDA model was trained ("j.vthreads").
const char* const kLaterGpuWords[] = {"vthreads"};

// Words of CPU spaces (and the element type float64) added after the bundled CPU model was
// trained: a CPU model knows them once it is trained on a vocabulary that has them
// (names_space: until then, not its to decide).
const char* const kLaterCpuWords[] = {"tensorize", "float64"};

// GPU sketch rules added after the bundled CUDA model was trained: the sketch names with one
// of them come last in the vocabulary (names_space: until a model is trained on them, not
// its to decide).
const char* const kLaterGpuRules[] = {"cross_thread_product"};

// Whether a subset of rules (a mask over `rules`) holds a rule of kLaterGpuRules.
bool has_later_rule(const std::vector<std::unique_ptr<scheduler::SketchRule>>& rules,
                    uint32_t mask) {
  for (size_t r = 0; r < rules.size(); ++r)
    if (mask & (1u << r))
      for (const char* later : kLaterGpuRules)
        if (rules[r]->name() == later) return true;
  return false;
}

// The sketch names of a list of rules: the applied ones in their declared order, any subset
// with (`later`) or without a rule of kLaterGpuRules.
std::vector<std::string> sketch_names(
    const std::vector<std::unique_ptr<scheduler::SketchRule>>& rules, bool later) {
  std::vector<std::string> out;
  for (uint32_t mask = 1; mask < (1u << rules.size()); ++mask) {
    if (has_later_rule(rules, mask) != later) continue;
    std::string name;
    for (size_t r = 0; r < rules.size(); ++r)
      if (mask & (1u << r)) name += (name.empty() ? "" : "+") + std::string(rules[r]->name());
    out.push_back(std::move(name));
  }
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace

const Vocabulary& Vocabulary::get() {
  static const Vocabulary v;
  return v;
}

void Vocabulary::add(std::string text) {
  if (ids_.count(text)) return;  // a word that is also an operator's name, say
  ids_.emplace(text, static_cast<Token>(texts_.size()));
  texts_.push_back(std::move(text));
}

Vocabulary::Vocabulary() {
  for (const char* s : {"<pad>", "<bos>", "<eos>", "<unk>"}) add(s);
  first_number_ = static_cast<Token>(texts_.size());
  for (int64_t v = 0; v <= scheduler::kLargestSpaceValue; ++v) add(std::to_string(v));
  for (const char* s : kStructure) add(s);
  // The space kinds the first CPU model was trained with (later ones: kLaterCpuWords).
  for (int k = 0; k <= static_cast<int>(scheduler::SpaceKind::Layout); ++k)
    add(std::string(scheduler::space_kind_name(static_cast<scheduler::SpaceKind>(k))));
  add("none");
  for (std::string& name : sketch_names(scheduler::cpu_sketch_rules(), false)) add(std::move(name));
  for (int t = 0; t <= static_cast<int>(ir::DType::Bool); ++t)
    add(std::string(ir::dtype_name(static_cast<ir::DType>(t))));
  std::vector<std::string> ops;
  for (const ir::OpSchema* op : ir::all_ops()) ops.push_back(lower(op->name));
  std::sort(ops.begin(), ops.end());
  for (std::string& op : ops) add(std::move(op));
  for (const char* s : kNameWords) add(s);
  cpu_size_ = texts_.size();
  // The CUDA words, after every CPU token (a word both use keeps its CPU token).
  for (const char* s : kGpuWords) add(s);
  for (std::string& name : sketch_names(scheduler::gpu_sketch_rules(), false)) add(std::move(name));
  // Words of spaces added since, appended so that a model trained before knows every token
  // it knew (a word it does not know reads as <unk> to it).
  for (const char* s : kLaterGpuWords) add(s);
  cuda_only_.assign(cpu_size_, false);
  cuda_only_.resize(texts_.size(), true);
  for (const char* s : kLaterCpuWords) add(s);
  cuda_only_.resize(texts_.size(), false);
  for (std::string& name : sketch_names(scheduler::gpu_sketch_rules(), true)) add(std::move(name));
  cuda_only_.resize(texts_.size(), true);

  uint64_t h = 1469598103934665603ull;  // FNV-1a over the texts, each ended by a 0 byte
  prefix_fingerprints_.push_back(h);
  for (const std::string& t : texts_) {
    for (char c : t) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    h = (h ^ 0u) * 1099511628211ull;
    prefix_fingerprints_.push_back(h);
  }
}

std::optional<size_t> Vocabulary::known_prefix(uint64_t fingerprint) const {
  for (size_t n = prefix_fingerprints_.size(); n-- > 1;)
    if (prefix_fingerprints_[n] == fingerprint) return n;
  return std::nullopt;
}

std::optional<Token> Vocabulary::find(std::string_view text) const {
  auto it = ids_.find(std::string(text));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

std::optional<Token> Vocabulary::find(std::string_view text, size_t limit) const {
  std::optional<Token> t = find(text);
  if (t && static_cast<size_t>(*t) >= limit) return std::nullopt;
  return t;
}

Token Vocabulary::at(std::string_view text) const {
  std::optional<Token> t = find(text);
  TLMC_ASSERT(t, "the tensor language has no token '" << text << "'");
  return *t;
}

Token Vocabulary::number(int64_t value) const {
  TLMC_ASSERT(value >= 0 && value <= scheduler::kLargestSpaceValue,
              "number " << value << " has no token");
  return first_number_ + static_cast<Token>(value);
}

std::optional<int64_t> Vocabulary::value_of(Token t) const {
  if (t < first_number_ || t > first_number_ + scheduler::kLargestSpaceValue) return std::nullopt;
  return t - first_number_;
}

}  // namespace tlmc::lm
