#include "lm/tensor_sentence.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "ir/diagnostic.h"

namespace tlmc::lm {
namespace {

using scheduler::kLargestSpaceValue;

const Vocabulary& vocab() { return Vocabulary::get(); }

// A number: one token up to kLargestSpaceValue; above, "num2" or "num3" and its digits in
// base kLargestSpaceValue + 1, most significant first (larger ones saturate); negative
// numbers after "-".
void append_number(std::vector<Token>& out, int64_t n) {
  if (n < 0) {
    out.push_back(vocab().at("-"));
    n = n == INT64_MIN ? INT64_MAX : -n;
  }
  const int64_t base = kLargestSpaceValue + 1;
  if (n < base) {
    out.push_back(vocab().number(n));
    return;
  }
  if (n < base * base) {
    out.push_back(vocab().at("num2"));
    out.push_back(vocab().number(n / base));
    out.push_back(vocab().number(n % base));
    return;
  }
  n = std::min(n, base * base * base - 1);
  out.push_back(vocab().at("num3"));
  out.push_back(vocab().number(n / (base * base)));
  out.push_back(vocab().number(n / base % base));
  out.push_back(vocab().number(n % base));
}

// A name: its runs of letters (and '_') as words, its runs of digits as numbers, any other
// character as itself ("oh.1" is "oh" "." "1"); words among the vocabulary's first `limit`
// tokens only (a CPU prompt's: Vocabulary::cpu_size), others <unk>.
void append_name(std::vector<Token>& out, std::string_view name,
                 size_t limit = Vocabulary::get().size()) {
  size_t i = 0;
  while (i < name.size()) {
    const auto c = static_cast<unsigned char>(name[i]);
    size_t j = i + 1;
    if (std::isdigit(c)) {
      while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
      if (j - i <= 9) {
        append_number(out, std::stoll(std::string(name.substr(i, j - i))));
      } else {
        out.push_back(Vocabulary::kUnk);
      }
    } else if (std::isalpha(c) || c == '_') {
      while (j < name.size() &&
             (std::isalpha(static_cast<unsigned char>(name[j])) || name[j] == '_'))
        ++j;
      std::string word(name.substr(i, j - i));
      std::transform(word.begin(), word.end(), word.begin(),
                     [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      out.push_back(vocab().find(word, limit).value_or(Vocabulary::kUnk));
    } else {
      out.push_back(vocab().find(name.substr(i, 1), limit).value_or(Vocabulary::kUnk));
    }
    i = j;
  }
}

// An index as a sum of variables times coefficients plus a constant; false when it is not
// affine in the variables.
bool affine(const ir::Expr& e, std::map<int, int64_t>& terms, int64_t& constant, int64_t scale) {
  int64_t c = 0;
  if (ir::is_int_const(e, &c)) {
    constant += scale * c;
    return true;
  }
  if (e->kind == ir::ExprKind::Var) {
    terms[e->var_id] += scale;
    return true;
  }
  if (e->kind != ir::ExprKind::Binary) return false;
  switch (e->binary_op) {
    case ir::BinaryOp::Add:
      return affine(e->args[0], terms, constant, scale) &&
             affine(e->args[1], terms, constant, scale);
    case ir::BinaryOp::Sub:
      return affine(e->args[0], terms, constant, scale) &&
             affine(e->args[1], terms, constant, -scale);
    case ir::BinaryOp::Mul:
      if (ir::is_int_const(e->args[1], &c)) return affine(e->args[0], terms, constant, scale * c);
      if (ir::is_int_const(e->args[0], &c)) return affine(e->args[1], terms, constant, scale * c);
      return false;
    default:
      return false;
  }
}

// One load: the kind of tensor it reads, then per dimension "dim" and its index's terms.
std::vector<Token> load_tokens(const ir::TeProgram& program, const ir::ExprNode& load,
                               const std::map<int, std::string>& axis_names, size_t limit) {
  std::vector<Token> out;
  const ir::TeTensor& t = program.tensor(load.var_id);
  out.push_back(vocab().at("load"));
  out.push_back(vocab().at(t.stage >= 0 ? "temp" : t.constant ? "const" : "input"));
  for (const ir::Expr& index : load.args) {
    out.push_back(vocab().at("dim"));
    std::map<int, int64_t> terms;
    int64_t constant = 0;
    if (!affine(index, terms, constant, 1)) {
      out.push_back(vocab().at("?"));
      continue;
    }
    bool first = true;
    for (const auto& [var, coefficient] : terms) {
      if (coefficient == 0) continue;
      if (!first) out.push_back(vocab().at("+"));
      first = false;
      auto name = axis_names.find(var);
      if (name == axis_names.end()) {
        out.push_back(Vocabulary::kUnk);
      } else {
        append_name(out, name->second, limit);
      }
      if (coefficient != 1) {
        out.push_back(vocab().at("*"));
        append_number(out, coefficient);
      }
    }
    if (constant != 0 || first) {
      if (!first) out.push_back(vocab().at("+"));
      append_number(out, constant);
    }
  }
  return out;
}

void append_stage(std::vector<Token>& out, const ir::TeProgram& program, const ir::Stage& s,
                  size_t limit) {
  out.push_back(vocab().at("stage"));
  append_name(out, s.op.empty() ? "ew" : s.op, limit);
  // The suffix lowering gives a stage of an operator ("x.pad", "y.sum") when it is a word of
  // the vocabulary; other names are the model's tensor names, which say nothing here.
  const size_t dot = s.name.rfind('.');
  if (dot != std::string::npos)
    if (std::optional<Token> suffix = vocab().find(s.name.substr(dot + 1), limit))
      out.push_back(*suffix);
  out.push_back(vocab().at(ir::dtype_name(program.tensor(s.output).dtype)));
  switch (s.reduce) {
    case ir::ReduceKind::None:
      break;
    case ir::ReduceKind::Sum:
      out.insert(out.end(), {vocab().at("red"), vocab().at("sum")});
      break;
    case ir::ReduceKind::Max:
      out.insert(out.end(), {vocab().at("red"), vocab().at("max")});
      break;
    case ir::ReduceKind::Min:
      out.insert(out.end(), {vocab().at("red"), vocab().at("min")});
      break;
  }
  std::map<int, std::string> axis_names;
  for (const ir::Axis& a : s.axes) {
    append_name(out, a.name, limit);
    append_number(out, a.extent);
    axis_names[a.var_id] = a.name;
  }
  for (const ir::Axis& a : s.reduce_axes) {
    out.push_back(vocab().at("red"));
    append_name(out, a.name, limit);
    append_number(out, a.extent);
    axis_names[a.var_id] = a.name;
  }
  // Each distinct load once, in the order the body reads them.
  std::set<std::vector<Token>> seen;
  ir::visit_expr(s.body, [&](const ir::ExprNode& n) {
    if (n.kind != ir::ExprKind::Load) return;
    std::vector<Token> load = load_tokens(program, n, axis_names, limit);
    if (seen.insert(load).second) out.insert(out.end(), load.begin(), load.end());
  });
}

std::string_view isa_word(ir::Isa isa) {
  switch (isa) {
    case ir::Isa::Generic:
      return "generic";
    case ir::Isa::Avx2:
      return "avx2";
    case ir::Isa::Avx512:
      return "avx512";
  }
  return "generic";
}

// A CUDA target's descriptor: compute capability, SMs, warp, threads (per block, per SM),
// blocks per SM, registers (per SM and per block in units of 1024, per thread), shared
// memory in KiB (static and opt-in per block, per SM), L2 in KiB, DRAM GB/s, float32 GFLOP/s.
void append_gpu_target(std::vector<Token>& out, const ir::GpuLimits& g) {
  auto field = [&](const char* word, std::initializer_list<int64_t> values) {
    out.push_back(vocab().at(word));
    for (int64_t v : values) append_number(out, v);
  };
  out.push_back(vocab().at("hw"));
  out.push_back(vocab().at("gpu"));
  field("sm", {g.sm});
  field("sms", {g.sms});
  field("warp", {g.warp});
  field("threads", {g.threads_per_block, g.threads_per_sm});
  field("blocks", {g.blocks_per_sm});
  field("regs", {g.regs_per_sm / 1024, g.regs_per_block / 1024, g.regs_per_thread});
  field("smem", {g.smem_per_block / 1024, g.smem_optin_per_block / 1024, g.smem_per_sm / 1024});
  field("l2", {g.l2_bytes / 1024});
  field("bw", {g.bandwidth_gbs});
  field("peak", {g.fp32_gflops});
}

void append_target(std::vector<Token>& out, const ir::Target& target) {
  if (target.is_cuda()) {
    append_gpu_target(out, target.gpu);
    return;
  }
  out.push_back(vocab().at("hw"));
  out.push_back(vocab().at("isa"));
  out.push_back(vocab().at(isa_word(target.isa)));
  out.push_back(vocab().at("vec"));
  append_number(out, target.vector_bytes);
  out.push_back(vocab().at("cores"));
  append_number(out, target.cores);
  out.push_back(vocab().at("l1d"));
  append_number(out, target.l1_bytes / 1024);
  out.push_back(vocab().at("l2"));
  append_number(out, target.l2_bytes / 1024);
  out.push_back(vocab().at("l3"));
  append_number(out, target.l3_bytes / 1024);
  out.push_back(vocab().at("cpu"));
  const std::string vendor = target.cpu.substr(0, target.cpu.find('-'));
  out.push_back(vocab().find(vendor).value_or(Vocabulary::kUnk));
  out.push_back(vocab().at(target.cold_weights ? "cold" : "warm"));
}

}  // namespace

std::vector<Token> prompt_tokens(const ir::TeProgram& program, const ir::Target& target) {
  std::vector<Token> out = {Vocabulary::kBos};
  // A CPU prompt reads as it did before the language gained the CUDA words.
  const size_t limit = target.is_cuda() ? vocab().size() : vocab().cpu_size();
  for (const ir::Stage& s : program.stages) append_stage(out, program, s, limit);
  append_target(out, target);
  out.push_back(vocab().at("sketch"));
  return out;
}

std::vector<Token> space_tokens(const scheduler::Space& space) {
  std::vector<Token> out = {vocab().at(scheduler::space_kind_name(space.kind))};
  append_name(out, space.stage);
  append_name(out, space.axis);
  return out;
}

std::vector<Token> sketch_tokens(const scheduler::Sketches& sketches) {
  std::vector<Token> out;
  for (const scheduler::Sketch& s : sketches) out.push_back(vocab().at(s.name()));
  return out;
}

bool names_space(const scheduler::Space& space, const KnownWords& words) {
  const std::vector<Token> name = space_tokens(space);
  return std::all_of(name.begin(), name.end(), [&](Token t) { return words.has(t); });
}

Sentence tensor_sentence(const std::vector<Token>& prompt, const scheduler::Sketches& sketches,
                         const scheduler::SpacePoint& point, const KnownWords& words) {
  if (point.sketch >= sketches.size())
    throw scheduler::InvalidDecision("sketch " + std::to_string(point.sketch) + " of " +
                                     std::to_string(sketches.size()));
  Sentence s;
  s.tokens = prompt;
  s.choices.resize(prompt.size());
  const scheduler::Sketch& sketch = sketches[point.sketch];
  const Token chosen = vocab().at(sketch.name());
  if (!words.has(chosen))
    throw scheduler::InvalidDecision("the model does not know the sketch " + sketch.name());
  s.tokens.push_back(chosen);
  std::vector<Token> named;  // the sketches the model can choose among
  for (Token t : sketch_tokens(sketches))
    if (words.has(t)) named.push_back(t);
  s.choices.push_back(std::move(named));
  scheduler::SketchCursor cursor(sketch);
  for (int64_t value : point.values) {
    if (cursor.done()) throw scheduler::InvalidDecision("more values than the sketch has spaces");
    if (!names_space(cursor.space(), words)) {
      cursor.choose(value);
      continue;
    }
    for (Token t : space_tokens(cursor.space())) {
      s.tokens.push_back(t);
      s.choices.emplace_back();
    }
    std::vector<Token> valid;
    for (int64_t v : cursor.valid_values()) valid.push_back(vocab().number(v));
    cursor.choose(value);  // InvalidDecision when not valid
    s.tokens.push_back(vocab().number(value));
    s.choices.push_back(std::move(valid));
  }
  if (!cursor.done()) throw scheduler::InvalidDecision("fewer values than the sketch has spaces");
  s.tokens.push_back(Vocabulary::kEos);
  s.choices.emplace_back();
  return s;
}

std::optional<scheduler::SpacePoint> parse_sentence(const scheduler::Sketches& sketches,
                                                    const std::vector<Token>& decisions) {
  if (decisions.empty()) return std::nullopt;
  scheduler::SpacePoint point;
  const std::vector<Token> names = sketch_tokens(sketches);
  auto named = std::find(names.begin(), names.end(), decisions[0]);
  if (named == names.end()) return std::nullopt;
  point.sketch = static_cast<size_t>(named - names.begin());
  scheduler::SketchCursor cursor(sketches[point.sketch]);
  size_t i = 1;
  try {
    while (!cursor.done()) {
      for (Token t : space_tokens(cursor.space()))
        if (i >= decisions.size() || decisions[i++] != t) return std::nullopt;
      if (i >= decisions.size()) return std::nullopt;
      std::optional<int64_t> value = vocab().value_of(decisions[i++]);
      if (!value) return std::nullopt;
      cursor.choose(*value);
      point.values.push_back(*value);
    }
  } catch (const scheduler::InvalidDecision&) {
    return std::nullopt;
  }
  if (i + 1 != decisions.size() || decisions[i] != Vocabulary::kEos) return std::nullopt;
  return point;
}

std::string sentence_text(const std::vector<Token>& tokens) {
  std::string out;
  for (Token t : tokens) out += (out.empty() ? "" : " ") + vocab().text(t);
  return out;
}

}  // namespace tlmc::lm
