#include "scheduler/pack_constants.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

#include "ir/diagnostic.h"

namespace tlmc::scheduler {

using ir::BinaryOp;
using ir::Expr;
using ir::ExprKind;
using ir::Stmt;
using ir::StmtKind;

namespace {

struct LoopVar {
  int64_t extent;
  int depth;  // 0 for the outermost loop
};
using Loops = std::map<int, LoopVar>;

// A digit of a loop variable: (v / divisor) % modulus, modulus 0 for none. Its values are
// [0, range). A limited digit stands for min(digit * step, limit) (a tile shifted back to
// end at its extent), kNoLimit for none.
struct Digit {
  int var;
  int64_t divisor;
  int64_t modulus;
  int64_t step = 1;
  int64_t limit = ir::Packing::kNoLimit;
  bool operator<(const Digit& o) const {
    return std::tie(var, divisor, modulus, step, limit) <
           std::tie(o.var, o.divisor, o.modulus, o.step, o.limit);
  }
};

// offset + sum of coefficient * digit.
struct Affine {
  int64_t offset = 0;
  std::map<Digit, int64_t> terms;
};

std::optional<Affine> scaled(std::optional<Affine> a, int64_t c) {
  if (!a) return a;
  a->offset *= c;
  for (auto& [d, k] : a->terms) k *= c;
  return a;
}

std::optional<Affine> digit_of(const Expr& e, int64_t modulus) {
  int64_t divisor = 1;
  Expr v = e;
  if (v->kind == ExprKind::Binary && v->binary_op == BinaryOp::FloorDiv &&
      ir::is_int_const(v->args[1], &divisor) && divisor > 0)
    v = v->args[0];
  if (v->kind != ExprKind::Var) return std::nullopt;
  Affine a;
  a.terms[Digit{v->var_id, divisor, modulus}] = 1;
  return a;
}

// e as an affine sum of loop digits; nullopt when it is not one.
std::optional<Affine> affine(const Expr& e) {
  int64_t c;
  switch (e->kind) {
    case ExprKind::IntImm: {
      Affine a;
      a.offset = e->int_value;
      return a;
    }
    case ExprKind::Var:
      return digit_of(e, 0);
    case ExprKind::Binary:
      break;
    default:
      return std::nullopt;
  }
  switch (e->binary_op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: {
      std::optional<Affine> a = affine(e->args[0]);
      std::optional<Affine> b = scaled(affine(e->args[1]), e->binary_op == BinaryOp::Sub ? -1 : 1);
      if (!a || !b) return std::nullopt;
      a->offset += b->offset;
      for (const auto& [d, k] : b->terms) a->terms[d] += k;
      return a;
    }
    case BinaryOp::Mul:
      if (ir::is_int_const(e->args[1], &c)) return scaled(affine(e->args[0]), c);
      if (ir::is_int_const(e->args[0], &c)) return scaled(affine(e->args[1]), c);
      return std::nullopt;
    case BinaryOp::FloorDiv:
      return digit_of(e, 0);
    case BinaryOp::FloorMod:
      if (!ir::is_int_const(e->args[1], &c) || c <= 0) return std::nullopt;
      return digit_of(e->args[0], c);
    case BinaryOp::Min: {
      // min(digit * step, limit), the start of a shifted tile.
      std::optional<Affine> a = affine(e->args[0]);
      if (!a || a->offset != 0 || a->terms.size() != 1 || !ir::is_int_const(e->args[1], &c) ||
          c < 0)
        return std::nullopt;
      const auto [d, step] = *a->terms.begin();
      if (step <= 0 || d.limit != ir::Packing::kNoLimit) return std::nullopt;
      Affine out;
      out.terms[Digit{d.var, d.divisor, d.modulus, step, c}] = 1;
      return out;
    }
    default:
      return std::nullopt;
  }
}

// A digit with its values counted: a modulus no smaller than the quotient's range dropped.
struct CountedDigit {
  Digit digit;
  int depth;
  int64_t range;
  int64_t coefficient;
};

std::optional<std::vector<CountedDigit>> counted_digits(const Affine& a, const Loops& loops) {
  std::map<Digit, CountedDigit> merged;
  for (const auto& [d, k] : a.terms) {
    auto loop = loops.find(d.var);
    if (loop == loops.end() || k == 0) return std::nullopt;
    const int64_t quotient = (loop->second.extent + d.divisor - 1) / d.divisor;
    Digit digit = d;
    if (digit.modulus >= quotient) digit.modulus = 0;
    // A limited digit scaled by a negative coefficient has no packed form.
    if (digit.limit != ir::Packing::kNoLimit && k < 0) return std::nullopt;
    const int64_t range = digit.modulus ? digit.modulus : quotient;
    auto [it, added] = merged.emplace(digit, CountedDigit{digit, loop->second.depth, range, 0});
    it->second.coefficient += k;
  }
  std::vector<CountedDigit> out;
  for (const auto& [d, c] : merged)
    if (c.range > 1 && c.coefficient != 0) out.push_back(c);
  // Outer loops first; of one loop, the coarser digit first.
  std::sort(out.begin(), out.end(), [](const CountedDigit& x, const CountedDigit& y) {
    return std::tie(x.depth, y.digit.divisor, x.digit.var) <
           std::tie(y.depth, x.digit.divisor, y.digit.var);
  });
  return out;
}

Expr digit_expr(const Digit& d, const std::string& name) {
  Expr v = ir::make_var(d.var, name);
  if (d.divisor > 1) v = ir::make_binary(BinaryOp::FloorDiv, v, ir::make_int(d.divisor));
  if (d.modulus) v = ir::make_binary(BinaryOp::FloorMod, v, ir::make_int(d.modulus));
  return v;
}

// Every load of a buffer: its index, and the loops around it.
struct LoadSite {
  Expr index;
  Loops loops;
};

void find_loads(const Stmt& s, int buffer, Loops& loops, int depth, std::vector<LoadSite>& out,
                std::map<int, std::string>& names) {
  auto scan = [&](const Expr& e) {
    if (!e) return;
    ir::visit_expr(e, [&](const ir::ExprNode& n) {
      if (n.kind == ExprKind::Load && n.var_id == buffer) out.push_back({n.args[0], loops});
    });
  };
  switch (s->kind) {
    case StmtKind::For:
      loops[s->var_id] = LoopVar{s->extent, depth};
      names[s->var_id] = s->var_name;
      find_loads(s->body[0], buffer, loops, depth + 1, out, names);
      loops.erase(s->var_id);
      return;
    case StmtKind::Seq:
      for (const Stmt& c : s->body) find_loads(c, buffer, loops, depth, out, names);
      return;
    case StmtKind::Store:
      scan(s->index);
      scan(s->value);
      return;
    case StmtKind::Allocate:
      find_loads(s->body[0], buffer, loops, depth, out, names);
      return;
    case StmtKind::If:
      scan(s->cond);
      find_loads(s->body[0], buffer, loops, depth, out, names);
      return;
    case StmtKind::Barrier:
      return;
    case StmtKind::TileProduct:
      for (const Expr& e : ir::stmt_exprs(*s)) scan(e);
      return;
  }
}

Stmt rewrite_stmt(const Stmt& s, const std::function<Expr(const Expr&)>& f) {
  switch (s->kind) {
    case StmtKind::For:
      return ir::make_for(s->var_id, s->var_name, s->extent, s->loop_kind,
                          rewrite_stmt(s->body[0], f));
    case StmtKind::Seq: {
      std::vector<Stmt> body;
      for (const Stmt& c : s->body) body.push_back(rewrite_stmt(c, f));
      return ir::make_seq(std::move(body));
    }
    case StmtKind::Store:
      return ir::make_store(s->buffer, f(s->index), f(s->value));
    case StmtKind::Allocate:
      return ir::make_allocate(s->buffer, rewrite_stmt(s->body[0], f));
    case StmtKind::If:
      return ir::make_if(f(s->cond), rewrite_stmt(s->body[0], f));
    case StmtKind::Barrier:
    case StmtKind::TileProduct:  // its operands are laid out by the Tensorize decision
      return s;
  }
  TLMC_ASSERT(false, "unknown statement kind");
}

// A copy at most this many times the input's size is allowed.
constexpr int64_t kMaxGrowth = 2;

void pack_one(ir::LoopProgram& p, int buffer) {
  ir::Buffer& b = p.buffers.at(static_cast<size_t>(buffer));
  TLMC_ASSERT(b.scope == ir::BufferScope::Param && !b.packing, "cannot pack buffer " << b.name);
  std::vector<LoadSite> sites;
  std::map<int, std::string> names;
  Loops loops;
  find_loads(p.body, buffer, loops, 0, sites, names);
  if (sites.empty()) return;
  for (const LoadSite& s : sites)
    if (!ir::expr_equal(s.index, sites[0].index)) return;
  const std::optional<Affine> a = affine(sites[0].index);
  if (!a) return;
  const std::optional<std::vector<CountedDigit>> digits = counted_digits(*a, sites[0].loops);
  if (!digits) return;
  ir::Packing packing;
  packing.source_offset = a->offset;
  int64_t size = 1;
  bool limited = false;
  for (const CountedDigit& d : *digits) {
    const bool has_limit = d.digit.limit != ir::Packing::kNoLimit;
    packing.extents.push_back(d.range);
    packing.source_strides.push_back(d.coefficient * d.digit.step);
    packing.source_limits.push_back(has_limit ? d.coefficient * d.digit.limit
                                              : ir::Packing::kNoLimit);
    limited = limited || has_limit;
    size *= d.range;
    if (size > kMaxGrowth * std::max<int64_t>(b.size, 1)) return;
  }
  if (!limited) packing.source_limits.clear();
  // Row-major strides of the copy; when they are the source's own, nothing changes.
  std::vector<int64_t> strides(digits->size(), 1);
  for (size_t i = strides.size(); i-- > 1;) strides[i - 1] = strides[i] * packing.extents[i];
  if (size == b.size && packing.source_offset == 0 && strides == packing.source_strides && !limited)
    return;
  Expr index = ir::make_int(0);
  for (size_t i = 0; i < digits->size(); ++i) {
    const Digit& d = (*digits)[i].digit;
    index = index + digit_expr(d, names.at(d.var)) * strides[i];
  }
  p.body = rewrite_stmt(p.body, [&](const Expr& e) {
    return ir::rewrite_loads(e, [&](const Expr& load, std::vector<Expr> idx) -> Expr {
      if (load->var_id != buffer) return ir::make_load(load->dtype, load->var_id, std::move(idx));
      return ir::make_load(load->dtype, buffer, {index});
    });
  });
  b.size = size;
  b.packing = std::move(packing);
}

}  // namespace

void pack_constants(ir::LoopProgram& p, const std::vector<int>& buffers) {
  for (int b : buffers) pack_one(p, b);
  ir::verify_loops(p);
}

}  // namespace tlmc::scheduler
