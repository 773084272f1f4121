#include "ir/expr.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <sstream>

#include "ir/diagnostic.h"

namespace tlmc::ir {
namespace {

std::shared_ptr<ExprNode> node(ExprKind k, DType t) {
  auto n = std::make_shared<ExprNode>();
  n->kind = k;
  n->dtype = t;
  return n;
}

// Folds an integer operation on two constants; false when it cannot.
bool fold_ints(BinaryOp op, int64_t a, int64_t b, int64_t* out) {
  switch (op) {
    case BinaryOp::Add:
      *out = a + b;
      return true;
    case BinaryOp::Sub:
      *out = a - b;
      return true;
    case BinaryOp::Mul:
      *out = a * b;
      return true;
    case BinaryOp::FloorDiv:
      if (b == 0) return false;
      *out = floor_div(a, b);
      return true;
    case BinaryOp::FloorMod:
      if (b == 0) return false;
      *out = floor_mod(a, b);
      return true;
    case BinaryOp::Min:
      *out = std::min(a, b);
      return true;
    case BinaryOp::Max:
      *out = std::max(a, b);
      return true;
    case BinaryOp::Div:
    case BinaryOp::Pow:
    case BinaryOp::LT:
    case BinaryOp::LE:
    case BinaryOp::EQ:
    case BinaryOp::NE:
    case BinaryOp::And:
    case BinaryOp::Or:
    case BinaryOp::ShuffleXor:
      return false;
  }
  return false;
}

}  // namespace

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

Expr make_int(int64_t v) {
  auto n = node(ExprKind::IntImm, DType::Int64);
  n->int_value = v;
  return n;
}

Expr make_float(double v, DType t) {
  auto n = node(ExprKind::FloatImm, t);
  n->float_value = v;
  return n;
}

Expr make_var(int id, const std::string& name) {
  auto n = node(ExprKind::Var, DType::Int64);
  n->var_id = id;
  n->name = name;
  return n;
}

Expr make_load(DType t, int buffer, std::vector<Expr> indices) {
  for (const Expr& i : indices)
    TLMC_ASSERT(i && i->dtype == DType::Int64, "load index must be int64");
  auto n = node(ExprKind::Load, t);
  n->var_id = buffer;
  n->args = std::move(indices);
  return n;
}

Expr make_unary(UnaryOp op, Expr a) {
  TLMC_ASSERT(a, "null operand");
  auto n = node(ExprKind::Unary, op == UnaryOp::Not ? DType::Bool : a->dtype);
  n->unary_op = op;
  n->args = {std::move(a)};
  return n;
}

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::LT || op == BinaryOp::LE || op == BinaryOp::EQ || op == BinaryOp::NE ||
         op == BinaryOp::And || op == BinaryOp::Or;
}

bool is_int_const(const Expr& e, int64_t* value) {
  if (e->kind != ExprKind::IntImm) return false;
  if (value) *value = e->int_value;
  return true;
}

Expr make_binary(BinaryOp op, Expr a, Expr b) {
  TLMC_ASSERT(a && b, "null operand");
  if (op == BinaryOp::ShuffleXor)
    TLMC_ASSERT(is_int_const(b), "a shuffle's lane mask is a constant");
  else
    TLMC_ASSERT(a->dtype == b->dtype, "operand types differ: " << dtype_name(a->dtype) << " vs "
                                                               << dtype_name(b->dtype) << " in "
                                                               << binary_name(op));
  int64_t x = 0, y = 0, r = 0;
  const bool ca = is_int_const(a, &x), cb = is_int_const(b, &y);
  if (ca && cb && fold_ints(op, x, y, &r)) return make_int(r);
  if (a->dtype == DType::Int64) {
    if (op == BinaryOp::Add && ca && x == 0) return b;
    if ((op == BinaryOp::Add || op == BinaryOp::Sub) && cb && y == 0) return a;
    if (op == BinaryOp::Mul && ((ca && x == 0) || (cb && y == 0))) return make_int(0);
    if (op == BinaryOp::Mul && ca && x == 1) return b;
    if ((op == BinaryOp::Mul || op == BinaryOp::FloorDiv) && cb && y == 1) return a;
    if (op == BinaryOp::FloorMod && cb && y == 1) return make_int(0);
    // (e + c1) + c2 -> e + (c1 + c2): keeps region offsets in one canonical form.
    int64_t inner;
    if (op == BinaryOp::Add && cb && a->kind == ExprKind::Binary && a->binary_op == BinaryOp::Add &&
        is_int_const(a->args[1], &inner))
      return make_binary(BinaryOp::Add, a->args[0], make_int(inner + y));
    // x - x -> 0 and (x + y) - x -> y: region offsets cancel against loop bases.
    if (op == BinaryOp::Sub && expr_equal(a, b)) return make_int(0);
    if (op == BinaryOp::Sub && a->kind == ExprKind::Binary && a->binary_op == BinaryOp::Add) {
      if (expr_equal(a->args[0], b)) return a->args[1];
      if (expr_equal(a->args[1], b)) return a->args[0];
    }
    // Constants go to the right of + and *.
    if ((op == BinaryOp::Add || op == BinaryOp::Mul) && ca && !cb) return make_binary(op, b, a);
  }
  auto n = node(ExprKind::Binary, is_comparison(op) ? DType::Bool : a->dtype);
  n->binary_op = op;
  n->args = {std::move(a), std::move(b)};
  return n;
}

Expr make_select(Expr cond, Expr then_value, Expr else_value) {
  TLMC_ASSERT(cond->dtype == DType::Bool, "select condition must be bool");
  TLMC_ASSERT(then_value->dtype == else_value->dtype, "select branches differ in type");
  auto n = node(ExprKind::Select, then_value->dtype);
  n->args = {std::move(cond), std::move(then_value), std::move(else_value)};
  return n;
}

Expr make_cast(DType t, Expr a) {
  if (a->dtype == t) return a;
  if (a->kind == ExprKind::IntImm && dtype_is_float(t))
    return make_float(static_cast<double>(a->int_value), t);
  auto n = node(ExprKind::Cast, t);
  n->args = {std::move(a)};
  return n;
}

bool expr_equal(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (a->kind != b->kind || a->dtype != b->dtype || a->args.size() != b->args.size()) return false;
  switch (a->kind) {
    case ExprKind::IntImm:
      return a->int_value == b->int_value;
    case ExprKind::FloatImm:
      return a->float_value == b->float_value;
    case ExprKind::Var:
      return a->var_id == b->var_id;
    case ExprKind::Load:
      if (a->var_id != b->var_id) return false;
      break;
    case ExprKind::Unary:
      if (a->unary_op != b->unary_op) return false;
      break;
    case ExprKind::Binary:
      if (a->binary_op != b->binary_op) return false;
      break;
    case ExprKind::Select:
    case ExprKind::Cast:
      break;
  }
  for (size_t i = 0; i < a->args.size(); ++i)
    if (!expr_equal(a->args[i], b->args[i])) return false;
  return true;
}

namespace {
// Rebuilds a node with new arguments through the checked constructors (so folding applies).
Expr rebuild(const Expr& e, std::vector<Expr> args) {
  bool same = true;
  for (size_t i = 0; i < args.size(); ++i) same = same && args[i] == e->args[i];
  if (same) return e;
  switch (e->kind) {
    case ExprKind::Load:
      return make_load(e->dtype, e->var_id, std::move(args));
    case ExprKind::Unary:
      return make_unary(e->unary_op, args[0]);
    case ExprKind::Binary:
      return make_binary(e->binary_op, args[0], args[1]);
    case ExprKind::Select:
      return make_select(args[0], args[1], args[2]);
    case ExprKind::Cast:
      return make_cast(e->dtype, args[0]);
    case ExprKind::IntImm:
    case ExprKind::FloatImm:
    case ExprKind::Var:
      return e;
  }
  return e;
}
}  // namespace

Expr substitute(const Expr& e, const std::vector<std::pair<int, Expr>>& var_values) {
  if (e->kind == ExprKind::Var) {
    for (const auto& [id, v] : var_values)
      if (id == e->var_id) return v;
    return e;
  }
  if (e->args.empty()) return e;
  std::vector<Expr> args;
  args.reserve(e->args.size());
  for (const Expr& a : e->args) args.push_back(substitute(a, var_values));
  return rebuild(e, std::move(args));
}

bool uses_var(const Expr& e, int var_id) {
  if (e->kind == ExprKind::Var) return e->var_id == var_id;
  for (const Expr& a : e->args)
    if (uses_var(a, var_id)) return true;
  return false;
}

std::optional<int64_t> linear_coefficient(const Expr& e, int var_id) {
  if (!uses_var(e, var_id)) return 0;
  if (e->kind == ExprKind::Var) return 1;
  if (e->kind != ExprKind::Binary) return std::nullopt;
  const auto a = linear_coefficient(e->args[0], var_id);
  const auto b = linear_coefficient(e->args[1], var_id);
  if (!a || !b) return std::nullopt;
  int64_t c;
  switch (e->binary_op) {
    case BinaryOp::Add:
      return *a + *b;
    case BinaryOp::Sub:
      return *a - *b;
    case BinaryOp::Mul:
      if (is_int_const(e->args[1], &c)) return *a * c;
      if (is_int_const(e->args[0], &c)) return *b * c;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<std::pair<int64_t, int64_t>> value_range(const Expr& e,
                                                       const std::map<int, int64_t>& extents) {
  using Range = std::pair<int64_t, int64_t>;
  int64_t c;
  if (is_int_const(e, &c)) return Range{c, c};
  if (e->kind == ExprKind::Var) {
    const auto it = extents.find(e->var_id);
    if (it == extents.end() || it->second < 1) return std::nullopt;
    return Range{0, it->second - 1};
  }
  if (e->kind == ExprKind::Select && e->dtype == DType::Int64) {
    // Either value, whatever the condition.
    const auto t = value_range(e->args[1], extents), f = value_range(e->args[2], extents);
    if (!t || !f) return std::nullopt;
    return Range{std::min(t->first, f->first), std::max(t->second, f->second)};
  }
  if (e->kind != ExprKind::Binary || e->dtype != DType::Int64) return std::nullopt;
  const auto a = value_range(e->args[0], extents);
  if (!a) return std::nullopt;
  if (e->binary_op == BinaryOp::FloorDiv || e->binary_op == BinaryOp::FloorMod) {
    if (!is_int_const(e->args[1], &c) || c <= 0) return std::nullopt;
    if (e->binary_op == BinaryOp::FloorDiv)
      return Range{floor_div(a->first, c), floor_div(a->second, c)};
    // The remainder runs over [a, b] where a and b lie in one multiple's span, else all of it.
    if (floor_div(a->first, c) == floor_div(a->second, c))
      return Range{floor_mod(a->first, c), floor_mod(a->second, c)};
    return Range{0, c - 1};
  }
  const auto b = value_range(e->args[1], extents);
  if (!b) return std::nullopt;
  // Bounds beyond int64 are not known.
  int64_t lo = 0, hi = 0;
  switch (e->binary_op) {
    case BinaryOp::Add:
      if (__builtin_add_overflow(a->first, b->first, &lo) ||
          __builtin_add_overflow(a->second, b->second, &hi))
        return std::nullopt;
      return Range{lo, hi};
    case BinaryOp::Sub:
      if (__builtin_sub_overflow(a->first, b->second, &lo) ||
          __builtin_sub_overflow(a->second, b->first, &hi))
        return std::nullopt;
      return Range{lo, hi};
    case BinaryOp::Mul: {
      int64_t corners[4];
      if (__builtin_mul_overflow(a->first, b->first, &corners[0]) ||
          __builtin_mul_overflow(a->first, b->second, &corners[1]) ||
          __builtin_mul_overflow(a->second, b->first, &corners[2]) ||
          __builtin_mul_overflow(a->second, b->second, &corners[3]))
        return std::nullopt;
      return Range{*std::min_element(std::begin(corners), std::end(corners)),
                   *std::max_element(std::begin(corners), std::end(corners))};
    }
    case BinaryOp::Min:
      return Range{std::min(a->first, b->first), std::min(a->second, b->second)};
    case BinaryOp::Max:
      return Range{std::max(a->first, b->first), std::max(a->second, b->second)};
    default:
      return std::nullopt;
  }
}

bool always_true(const Expr& cond, const std::map<int, int64_t>& extents) {
  int64_t c;
  if (is_int_const(cond, &c)) return c != 0;
  if (cond->kind != ExprKind::Binary) return false;
  if (cond->binary_op == BinaryOp::And)
    return always_true(cond->args[0], extents) && always_true(cond->args[1], extents);
  if (!is_comparison(cond->binary_op)) return false;
  const auto a = value_range(cond->args[0], extents);
  const auto b = value_range(cond->args[1], extents);
  if (!a || !b) return false;
  switch (cond->binary_op) {
    case BinaryOp::LT:
      return a->second < b->first;
    case BinaryOp::LE:
      return a->second <= b->first;
    case BinaryOp::EQ:
      return a->first == a->second && b->first == b->second && a->first == b->first;
    case BinaryOp::NE:
      return a->second < b->first || b->second < a->first;
    default:
      return false;
  }
}

Expr rewrite_loads(const Expr& e, const std::function<Expr(const Expr&, std::vector<Expr>)>& f) {
  if (e->args.empty()) return e->kind == ExprKind::Load ? f(e, {}) : e;
  std::vector<Expr> args;
  args.reserve(e->args.size());
  for (const Expr& a : e->args) args.push_back(rewrite_loads(a, f));
  if (e->kind == ExprKind::Load) return f(e, std::move(args));
  return rebuild(e, std::move(args));
}

void visit_expr(const Expr& e, const std::function<void(const ExprNode&)>& f) {
  f(*e);
  for (const Expr& a : e->args) visit_expr(a, f);
}

std::string_view unary_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg:
      return "neg";
    case UnaryOp::Exp:
      return "exp";
    case UnaryOp::Log:
      return "log";
    case UnaryOp::Sqrt:
      return "sqrt";
    case UnaryOp::Tanh:
      return "tanh";
    case UnaryOp::Erf:
      return "erf";
    case UnaryOp::Sigmoid:
      return "sigmoid";
    case UnaryOp::Abs:
      return "abs";
    case UnaryOp::Not:
      return "not";
    case UnaryOp::Floor:
      return "floor";
  }
  return "?";
}

std::string_view binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "+";
    case BinaryOp::Sub:
      return "-";
    case BinaryOp::Mul:
      return "*";
    case BinaryOp::Div:
      return "/";
    case BinaryOp::FloorDiv:
      return "floordiv";
    case BinaryOp::FloorMod:
      return "floormod";
    case BinaryOp::Min:
      return "min";
    case BinaryOp::Max:
      return "max";
    case BinaryOp::Pow:
      return "pow";
    case BinaryOp::LT:
      return "<";
    case BinaryOp::LE:
      return "<=";
    case BinaryOp::EQ:
      return "==";
    case BinaryOp::NE:
      return "!=";
    case BinaryOp::And:
      return "&&";
    case BinaryOp::Or:
      return "||";
    case BinaryOp::ShuffleXor:
      return "shfl_xor";
  }
  return "?";
}

namespace {
void print(std::ostream& os, const Expr& e, const std::function<std::string(int)>& buffer_name) {
  switch (e->kind) {
    case ExprKind::IntImm:
      os << e->int_value;
      return;
    case ExprKind::FloatImm: {
      std::ostringstream f;
      f.precision(9);
      f << e->float_value;
      os << f.str() << "f";
      return;
    }
    case ExprKind::Var:
      os << e->name;
      return;
    case ExprKind::Load:
      os << buffer_name(e->var_id) << "[";
      for (size_t i = 0; i < e->args.size(); ++i) {
        if (i) os << ", ";
        print(os, e->args[i], buffer_name);
      }
      os << "]";
      return;
    case ExprKind::Unary:
      os << unary_name(e->unary_op) << "(";
      print(os, e->args[0], buffer_name);
      os << ")";
      return;
    case ExprKind::Binary: {
      const BinaryOp op = e->binary_op;
      const bool call = op == BinaryOp::FloorDiv || op == BinaryOp::FloorMod ||
                        op == BinaryOp::Min || op == BinaryOp::Max || op == BinaryOp::Pow ||
                        op == BinaryOp::ShuffleXor;
      if (call) {
        os << binary_name(op) << "(";
        print(os, e->args[0], buffer_name);
        os << ", ";
        print(os, e->args[1], buffer_name);
        os << ")";
        return;
      }
      os << "(";
      print(os, e->args[0], buffer_name);
      os << " " << binary_name(op) << " ";
      print(os, e->args[1], buffer_name);
      os << ")";
      return;
    }
    case ExprKind::Select:
      os << "select(";
      print(os, e->args[0], buffer_name);
      os << ", ";
      print(os, e->args[1], buffer_name);
      os << ", ";
      print(os, e->args[2], buffer_name);
      os << ")";
      return;
    case ExprKind::Cast:
      os << dtype_name(e->dtype) << "(";
      print(os, e->args[0], buffer_name);
      os << ")";
      return;
  }
}
}  // namespace

std::string expr_str(const Expr& e, const std::function<std::string(int)>& buffer_name) {
  std::ostringstream os;
  print(os, e, buffer_name);
  return os.str();
}

}  // namespace tlmc::ir
