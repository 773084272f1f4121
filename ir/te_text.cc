#include "ir/te_text.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ir/diagnostic.h"
#include "ir/graph.h"

namespace tlmc::ir {

namespace {

// The first word of the text, then the version: text of another version is refused.
constexpr std::string_view kMagic = "tlmc-te";
constexpr int kVersion = 1;
// Expressions nest no deeper than this (a damaged text could otherwise exhaust the stack).
constexpr int kDeepest = 2000;
// A stage's iterations, all its loops together: products of extents never overflow.
constexpr int64_t kMaxStageIterations = int64_t{1} << 62;

// Names become one whitespace-free word: '%', blanks and bytes outside printable ASCII as
// %XX; the empty name as a lone '%'.
std::string escape(std::string_view name) {
  if (name.empty()) return "%";
  std::string out;
  for (unsigned char c : name) {
    if (c > ' ' && c < 127 && c != '%') {
      out += static_cast<char>(c);
      continue;
    }
    char buf[4];
    std::snprintf(buf, sizeof buf, "%%%02X", c);
    out += buf;
  }
  return out;
}

void write_expr(std::ostream& os, const Expr& e) {
  switch (e->kind) {
    case ExprKind::IntImm:
      os << " i " << e->int_value;
      return;
    case ExprKind::FloatImm: {
      char buf[48];
      std::snprintf(buf, sizeof buf, "%a", e->float_value);
      os << " f " << dtype_name(e->dtype) << " " << buf;
      return;
    }
    case ExprKind::Var:
      os << " v " << e->var_id << " " << escape(e->name);
      return;
    case ExprKind::Load:
      os << " l " << dtype_name(e->dtype) << " " << e->var_id << " " << e->args.size();
      break;
    case ExprKind::Unary:
      os << " u " << unary_name(e->unary_op);
      break;
    case ExprKind::Binary:
      os << " b " << binary_name(e->binary_op);
      break;
    case ExprKind::Select:
      os << " s";
      break;
    case ExprKind::Cast:
      os << " c " << dtype_name(e->dtype);
      break;
  }
  for (const Expr& a : e->args) write_expr(os, a);
}

void write_axes(std::ostream& os, const std::vector<Axis>& axes) {
  os << " " << axes.size();
  for (const Axis& a : axes) os << " " << a.var_id << " " << escape(a.name) << " " << a.extent;
}

// Reads the text word by word; every error names the word it stopped at.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw TeTextError("program text, word " + std::to_string(words_) + ": " + what);
  }

  std::string_view word() {
    while (at_ < text_.size() && is_blank(text_[at_])) ++at_;
    if (at_ == text_.size()) fail("the text ends early");
    const size_t start = at_;
    while (at_ < text_.size() && !is_blank(text_[at_])) ++at_;
    ++words_;
    return text_.substr(start, at_ - start);
  }

  void expect(std::string_view w) {
    if (word() != w) fail("expected '" + std::string(w) + "'");
  }

  int64_t integer(int64_t lo, int64_t hi) {
    const std::string_view w = word();
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || end != w.data() + w.size())
      fail("'" + std::string(w) + "' is not an integer");
    if (v < lo || v > hi) fail(std::to_string(v) + " is out of range");
    return v;
  }

  int index(size_t size) { return static_cast<int>(integer(0, static_cast<int64_t>(size) - 1)); }

  std::string name() {
    const std::string_view w = word();
    if (w == "%") return "";
    std::string out;
    for (size_t i = 0; i < w.size(); ++i) {
      if (w[i] != '%') {
        out += w[i];
        continue;
      }
      if (i + 2 >= w.size()) fail("a name ends inside an escape");
      const std::string hex(w.substr(i + 1, 2));
      char* end = nullptr;
      const long c = std::strtol(hex.c_str(), &end, 16);
      if (hex.size() != 2 || end != hex.c_str() + 2) fail("bad escape in a name");
      out += static_cast<char>(c);
      i += 2;
    }
    return out;
  }

  DType dtype() {
    const std::string_view w = word();
    const std::optional<DType> t = parse_dtype(w);
    if (!t) fail("'" + std::string(w) + "' is not a dtype");
    return *t;
  }

  bool done() {
    while (at_ < text_.size() && is_blank(text_[at_])) ++at_;
    return at_ == text_.size();
  }

 private:
  static bool is_blank(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }
  std::string_view text_;
  size_t at_ = 0;
  int64_t words_ = 0;
};

template <typename Op>
Op parse_op(Reader& r, std::string_view (*name)(Op), int count) {
  const std::string_view w = r.word();
  for (int i = 0; i < count; ++i)
    if (name(static_cast<Op>(i)) == w) return static_cast<Op>(i);
  r.fail("unknown operator '" + std::string(w) + "'");
}

Expr read_expr(Reader& r, const TeProgram& p, int depth) {
  if (depth > kDeepest) r.fail("expressions nest too deeply");
  const std::string_view kind = r.word();
  auto arg = [&] { return read_expr(r, p, depth + 1); };
  if (kind == "i") return make_int(r.integer(INT64_MIN, INT64_MAX));
  if (kind == "f") {
    const DType t = r.dtype();
    const std::string w(r.word());
    char* end = nullptr;
    const double v = std::strtod(w.c_str(), &end);
    if (end != w.c_str() + w.size()) r.fail("'" + w + "' is not a number");
    return make_float(v, t);
  }
  if (kind == "v") {
    const int id = static_cast<int>(r.integer(0, p.next_var - 1));
    return make_var(id, r.name());
  }
  if (kind == "l") {
    const DType t = r.dtype();
    const int buffer = r.index(p.tensors.size());
    const size_t rank = p.tensor(buffer).shape.size();
    if (r.integer(0, INT32_MAX) != static_cast<int64_t>(rank))
      r.fail("a load of " + p.tensor(buffer).name + " needs " + std::to_string(rank) + " indices");
    std::vector<Expr> indices;
    for (size_t i = 0; i < rank; ++i) indices.push_back(arg());
    return make_load(t, buffer, std::move(indices));
  }
  if (kind == "u") {
    const UnaryOp op = parse_op(r, unary_name, static_cast<int>(UnaryOp::Floor) + 1);
    return make_unary(op, arg());
  }
  if (kind == "b") {
    const BinaryOp op = parse_op(r, binary_name, static_cast<int>(BinaryOp::Or) + 1);
    Expr a = arg();
    return make_binary(op, a, arg());
  }
  if (kind == "s") {
    Expr c = arg();
    Expr t = arg();
    return make_select(c, t, arg());
  }
  if (kind == "c") {
    const DType t = r.dtype();
    return make_cast(t, arg());
  }
  r.fail("'" + std::string(kind) + "' does not start an expression");
}

std::vector<Axis> read_axes(Reader& r, int next_var) {
  std::vector<Axis> axes(static_cast<size_t>(r.integer(0, 64)));
  for (Axis& a : axes) {
    a.var_id = static_cast<int>(r.integer(0, next_var - 1));
    a.name = r.name();
    a.extent = r.integer(1, kMaxDimension);
  }
  return axes;
}

TeProgram read_program(Reader& r) {
  if (r.word() != kMagic) r.fail("not a tlmc program text");
  const int64_t version = r.integer(0, INT32_MAX);
  if (version != kVersion)
    r.fail("version " + std::to_string(version) + " (this tlmc reads version " +
           std::to_string(kVersion) + ")");
  TeProgram p;
  r.expect("vars");
  p.next_var = static_cast<int>(r.integer(0, INT32_MAX));
  r.expect("tensors");
  p.tensors.resize(static_cast<size_t>(r.integer(0, 1 << 16)));
  r.expect("stages");
  p.stages.resize(static_cast<size_t>(r.integer(0, 1 << 16)));
  for (TeTensor& t : p.tensors) {
    r.expect("tensor");
    t.name = r.name();
    t.dtype = r.dtype();
    t.shape.resize(static_cast<size_t>(r.integer(0, 64)));
    for (int64_t& d : t.shape) d = r.integer(0, kMaxDimension);
    // A model's limits (ir/graph.h), so that no size computed from the shape overflows.
    if (const std::string why = shape_beyond_limits(t.shape); !why.empty())
      r.fail("tensor " + t.name + ": " + why);
    t.stage = static_cast<int>(r.integer(-1, static_cast<int64_t>(p.stages.size()) - 1));
    t.constant = r.integer(0, 1) == 1;
  }
  for (Stage& s : p.stages) {
    r.expect("stage");
    s.name = r.name();
    s.output = r.index(p.tensors.size());
    s.op = r.name();
    const std::string_view reduce = r.word();
    bool known = false;
    for (ReduceKind k : {ReduceKind::None, ReduceKind::Sum, ReduceKind::Max, ReduceKind::Min})
      if (reduce_kind_name(k) == reduce) {
        s.reduce = k;
        known = true;
      }
    if (!known) r.fail("'" + std::string(reduce) + "' is not a reduction");
    s.axes = read_axes(r, p.next_var);
    s.reduce_axes = read_axes(r, p.next_var);
    // A stage's loops have names and variables of their own (schedules name them): tlmc
    // never writes two alike, and its scheduler relies on that.
    std::set<std::string> names;
    std::set<int> vars;
    int64_t iterations = 1;  // of all its loops: at most kMaxStageIterations
    for (const std::vector<Axis>* axes : {&s.axes, &s.reduce_axes})
      for (const Axis& a : *axes) {
        if (!names.insert(a.name).second || !vars.insert(a.var_id).second)
          r.fail("stage " + s.name + " has two loops named " + a.name + " or of variable " +
                 std::to_string(a.var_id));
        if (iterations > kMaxStageIterations / a.extent)
          r.fail("stage " + s.name + " runs more than 2^62 iterations");
        iterations *= a.extent;
      }
    s.body = read_expr(r, p, 0);
  }
  r.expect("inputs");
  p.inputs.resize(static_cast<size_t>(r.integer(0, 1 << 16)));
  for (int& i : p.inputs) i = r.index(p.tensors.size());
  r.expect("outputs");
  p.outputs.resize(static_cast<size_t>(r.integer(0, 1 << 16)));
  for (int& o : p.outputs) o = r.index(p.tensors.size());
  r.expect("end");
  if (!r.done()) r.fail("text follows the end of the program");
  return p;
}

}  // namespace

std::string te_to_text(const TeProgram& p) {
  std::ostringstream os;
  os << kMagic << " " << kVersion << "\nvars " << p.next_var << " tensors " << p.tensors.size()
     << " stages " << p.stages.size() << "\n";
  for (const TeTensor& t : p.tensors) {
    os << "tensor " << escape(t.name) << " " << dtype_name(t.dtype) << " " << t.shape.size();
    for (int64_t d : t.shape) os << " " << d;
    os << " " << t.stage << " " << (t.constant ? 1 : 0) << "\n";
  }
  for (const Stage& s : p.stages) {
    os << "stage " << escape(s.name) << " " << s.output << " " << escape(s.op) << " "
       << reduce_kind_name(s.reduce);
    write_axes(os, s.axes);
    write_axes(os, s.reduce_axes);
    os << "\n ";
    write_expr(os, s.body);
    os << "\n";
  }
  os << "inputs " << p.inputs.size();
  for (int i : p.inputs) os << " " << i;
  os << "\noutputs " << p.outputs.size();
  for (int o : p.outputs) os << " " << o;
  os << "\nend\n";
  return os.str();
}

TeProgram te_from_text(std::string_view text) {
  Reader r(text);
  try {
    TeProgram p = read_program(r);
    verify_te(p);
    return p;
  } catch (const InternalError& e) {
    // The make_* functions and verify_te check what the words describe; here that is a
    // damaged text, not a compiler bug.
    throw TeTextError(std::string("program text describes an inconsistent program: ") + e.what());
  }
}

}  // namespace tlmc::ir
