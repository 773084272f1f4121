// Scalar expressions, shared by the tensor-expression IR (loads with one index per
// dimension) and the loop-nest IR (loads with one flat index). Nodes are immutable and
// built only by the checked make_* functions; ints are int64, floats are float32 unless
// a cast says otherwise.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/dtype.h"

namespace tlmc::ir {

enum class ExprKind { IntImm, FloatImm, Var, Load, Unary, Binary, Select, Cast };

enum class UnaryOp { Neg, Exp, Log, Sqrt, Tanh, Erf, Sigmoid, Abs, Not, Floor };
enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  FloorMod,
  Min,
  Max,
  Pow,  // arithmetic
  LT,
  LE,
  EQ,
  NE,
  And,
  Or,  // give Bool
  // CUDA: a's value in the lane of the warp whose lane index is this lane's xor b (a
  // constant); every lane of the warp evaluates it together, in uniform control flow.
  ShuffleXor,
};

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  ExprKind kind;
  DType dtype;
  int64_t int_value = 0;   // IntImm
  double float_value = 0;  // FloatImm
  int var_id = -1;         // Var: identity; Load: the buffer (a TE tensor or loop buffer id)
  std::string name;        // Var: for printing
  UnaryOp unary_op = UnaryOp::Neg;
  BinaryOp binary_op = BinaryOp::Add;
  std::vector<Expr> args;  // Load: indices; Unary: 1; Binary: 2; Select: cond, then, else; Cast: 1
};

Expr make_int(int64_t v);
Expr make_float(double v, DType t = DType::Float32);
Expr make_var(int id, const std::string& name);  // int64 loop/axis variable
Expr make_load(DType t, int buffer, std::vector<Expr> indices);
Expr make_unary(UnaryOp op, Expr a);
// Folds constants and trivial identities (x+0, x*1, x*0 on ints) as it builds.
Expr make_binary(BinaryOp op, Expr a, Expr b);
Expr make_select(Expr cond, Expr then_value, Expr else_value);
Expr make_cast(DType t, Expr a);

inline Expr operator+(Expr a, Expr b) { return make_binary(BinaryOp::Add, a, b); }
inline Expr operator-(Expr a, Expr b) { return make_binary(BinaryOp::Sub, a, b); }
inline Expr operator*(Expr a, Expr b) { return make_binary(BinaryOp::Mul, a, b); }
inline Expr operator+(Expr a, int64_t b) { return a + make_int(b); }
inline Expr operator*(Expr a, int64_t b) { return a * make_int(b); }
inline Expr operator-(Expr a, int64_t b) { return a - make_int(b); }

// Floor division and its remainder (of b's sign), as FloorDiv and FloorMod compute them;
// b is not 0.
int64_t floor_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

bool is_int_const(const Expr& e, int64_t* value = nullptr);
bool is_comparison(BinaryOp op);
// Structural equality (variables by id).
bool expr_equal(const Expr& a, const Expr& b);
// Replaces variables by id; returns the same node where nothing changed.
Expr substitute(const Expr& e, const std::vector<std::pair<int, Expr>>& var_values);
// Does the expression mention variable `var_id`?
bool uses_var(const Expr& e, int var_id);
// The coefficient of variable `var_id` in an int expression affine in it (sums, differences
// and products by constants of terms, the others free of it); nothing where it is not.
std::optional<int64_t> linear_coefficient(const Expr& e, int var_id);
// The least and greatest value of an int expression whose variables range over
// [0, extent) (`extents`, by variable id): constants, those variables, +, -, *, min, max,
// floor division and remainder by a positive constant, and a choice between two such
// values; nothing where it holds anything else (a load, another variable) or a bound
// beyond int64.
std::optional<std::pair<int64_t, int64_t>> value_range(const Expr& e,
                                                       const std::map<int, int64_t>& extents);
// Whether a Bool expression (comparisons of such int expressions, joined by And) holds for
// every value of its variables in their ranges; false where that cannot be shown.
bool always_true(const Expr& cond, const std::map<int, int64_t>& extents);
// Applies f bottom-up to every Load; f returns the replacement (or the same node).
Expr rewrite_loads(const Expr& e,
                   const std::function<Expr(const Expr& load, std::vector<Expr> new_indices)>& f);
// Calls f on every node, pre-order.
void visit_expr(const Expr& e, const std::function<void(const ExprNode&)>& f);

std::string_view unary_name(UnaryOp op);
std::string_view binary_name(BinaryOp op);
// Readable text; loads print as `name[i, j]` with names from `buffer_name`.
std::string expr_str(const Expr& e, const std::function<std::string(int)>& buffer_name);

}  // namespace tlmc::ir
