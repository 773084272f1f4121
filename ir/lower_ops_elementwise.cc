// Lowerings of the element-wise operators, the views, Transpose, Concat and Gather.
#include <cmath>
#include <limits>

#include "ir/lower_ops.h"

namespace tlmc::ir {
namespace {

int out0(const Node& n) { return n.outputs.at(0); }
const std::string& out_name(const Node& n, TeBuilder& b) { return b.graph().tensor(out0(n)).name; }

// out[axes] = f(broadcast loads of every input)
// Loads the first `arity` inputs only (Clip's bounds are constants, not tensors).
template <typename F>
void pointwise(const Node& n, TeBuilder& b, size_t arity, F f) {
  const TensorType& ot = b.graph().type(out0(n));
  std::vector<Axis> axes = b.axes(ot.shape);
  std::vector<Expr> idx = TeBuilder::vars(axes);
  std::vector<Expr> in;
  for (size_t i = 0; i < arity; ++i) in.push_back(b.broadcast_load(b.tensor(n.inputs[i]), idx));
  b.bind(out0(n), b.stage(out_name(n, b), ot.dtype, axes, f(in)));
}

Expr f32(double v) { return make_float(v); }

// A scalar constant input (Clip's min and max): its value, or `fallback` when absent.
double scalar_input(const Node& n, size_t i, TeBuilder& b, double fallback) {
  if (i >= n.inputs.size() || n.inputs[i] < 0) return fallback;
  const Tensor& t = b.graph().tensor(n.inputs[i]);
  TLMC_ASSERT(t.data, n.describe() << " input " << i << " must be constant (checked by infer)");
  return weight_values(t).at(0);
}

}  // namespace

void lower_unary(const Node& n, TeBuilder& b) {
  pointwise(n, b, 1, [&](const std::vector<Expr>& in) -> Expr {
    const Expr& x = in[0];
    const std::string& op = n.op;
    if (op == "Relu") return make_binary(BinaryOp::Max, x, f32(0));
    if (op == "Sigmoid") return make_unary(UnaryOp::Sigmoid, x);
    if (op == "Tanh") return make_unary(UnaryOp::Tanh, x);
    if (op == "Erf") return make_unary(UnaryOp::Erf, x);
    if (op == "Exp") return make_unary(UnaryOp::Exp, x);
    if (op == "Log") return make_unary(UnaryOp::Log, x);
    if (op == "Sqrt") return make_unary(UnaryOp::Sqrt, x);
    if (op == "Floor") return make_unary(UnaryOp::Floor, x);
    if (op == "Neg") return make_unary(UnaryOp::Neg, x);
    if (op == "Abs") return make_unary(UnaryOp::Abs, x);
    if (op == "Not") return make_unary(UnaryOp::Not, x);
    if (op == "Reciprocal") return make_binary(BinaryOp::Div, f32(1), x);
    if (op == "LeakyRelu")
      return make_select(make_binary(BinaryOp::LT, x, f32(0)), x * f32(n.attr_float("alpha")), x);
    if (op == "HardSigmoid" || op == "HardSwish") {
      // max(0, min(1, alpha x + beta)); HardSwish is x times HardSigmoid(1/6, 1/2).
      const bool swish = op == "HardSwish";
      const double alpha = swish ? 1.0 / 6 : n.attr_float("alpha");
      const double beta = swish ? 0.5 : n.attr_float("beta");
      Expr h = make_binary(BinaryOp::Min, x * f32(alpha) + f32(beta), f32(1));
      h = make_binary(BinaryOp::Max, h, f32(0));
      return swish ? x * h : h;
    }
    if (op == "Clip") {
      const double inf = std::numeric_limits<double>::infinity();
      Expr lo = f32(scalar_input(n, 1, b, -inf)), hi = f32(scalar_input(n, 2, b, inf));
      return make_binary(BinaryOp::Min, make_binary(BinaryOp::Max, x, lo), hi);
    }
    if (op == "Cast") {
      // To bool: non-zero is true. Floats go to narrower integers through int64 (truncated
      // toward zero, then wrapped), as the reference does: defined for every float in range.
      const DType to = b.graph().type(out0(n)).dtype;
      // A 16-bit float is compared as float32: its bits of -0.0 are not 0.
      if (to == DType::Bool && dtype_is_half(x->dtype))
        return make_binary(BinaryOp::NE, make_cast(DType::Float32, x), f32(0));
      if (to == DType::Bool) return make_binary(BinaryOp::NE, x, typed_constant(0, x->dtype));
      if (dtype_is_float(x->dtype) && !dtype_is_float(to)) return make_cast(DType::Int64, x);
      return x;  // the stage casts its body to its dtype
    }
    TLMC_ASSERT(false, "lower_unary called for " << op);
  });
}

// The exponent of a float Pow when it is the constant 2 or 3 (GELU's tanh form cubes its
// input): such a power is a product, which vectorises, where powf is a libm call per
// element. 0 otherwise.
int small_integer_exponent(const Node& n, TeBuilder& b) {
  const Tensor& y = b.graph().tensor(n.inputs[1]);
  if (!y.data || y.type.numel() != 1 || y.type.dtype != DType::Float32) return 0;
  if (b.graph().type(n.inputs[0]).dtype != DType::Float32) return 0;
  const double e = weight_values(y).at(0);
  return e == 2 || e == 3 ? static_cast<int>(e) : 0;
}

void lower_binary(const Node& n, TeBuilder& b) {
  const int power = n.op == "Pow" ? small_integer_exponent(n, b) : 0;
  pointwise(n, b, 2, [&](const std::vector<Expr>& in) -> Expr {
    const std::string& op = n.op;
    const Expr &x = in[0], &y = in[1];
    if (op == "Add") return make_binary(BinaryOp::Add, x, y);
    if (op == "Sub") return make_binary(BinaryOp::Sub, x, y);
    if (op == "Mul") return make_binary(BinaryOp::Mul, x, y);
    if (op == "Pow" && power == 2) return x * x;
    if (op == "Pow" && power == 3) return x * x * x;
    if (op == "Pow") return make_binary(BinaryOp::Pow, x, y);
    // Integer division by zero is undefined in ONNX, and min / -1 overflows: the generated
    // code (tlmc_divi) gives 0 and wraps, as the reference interpreter does, never a trap.
    if (op == "Div") return make_binary(BinaryOp::Div, x, y);
    if (op == "Equal") return make_binary(BinaryOp::EQ, x, y);
    if (op == "Less") return make_binary(BinaryOp::LT, x, y);
    if (op == "Greater") return make_binary(BinaryOp::LT, y, x);
    if (op == "LessOrEqual") return make_binary(BinaryOp::LE, x, y);
    if (op == "GreaterOrEqual") return make_binary(BinaryOp::LE, y, x);
    if (op == "And") return make_binary(BinaryOp::And, x, y);
    if (op == "Or") return make_binary(BinaryOp::Or, x, y);
    TLMC_ASSERT(false, "lower_binary called for " << op);
  });
}

// Max and Min of any number of inputs, folded from the first: max(max(a, b), c).
void lower_variadic(const Node& n, TeBuilder& b) {
  pointwise(n, b, n.inputs.size(), [&](const std::vector<Expr>& in) -> Expr {
    const BinaryOp op = n.op == "Max" ? BinaryOp::Max : BinaryOp::Min;
    Expr acc = in[0];
    for (size_t i = 1; i < in.size(); ++i) acc = make_binary(op, acc, in[i]);
    return acc;
  });
}

void lower_where(const Node& n, TeBuilder& b) {
  pointwise(n, b, 3,
            [&](const std::vector<Expr>& in) -> Expr { return make_select(in[0], in[1], in[2]); });
}

void lower_batch_norm(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  std::vector<Axis> axes = b.axes(ot.shape);
  std::vector<Expr> idx = TeBuilder::vars(axes);
  // Parameters are per channel (dimension 1).
  auto param = [&](size_t i) { return b.load(b.tensor(n.inputs[i]), {idx.at(1)}); };
  Expr x = b.load(b.tensor(n.inputs[0]), idx);
  Expr inv = make_unary(UnaryOp::Sqrt, param(4) + f32(n.attr_float("epsilon")));
  Expr y = make_binary(BinaryOp::Div, (x - param(3)) * param(1), inv) + param(2);
  b.bind(out0(n), b.stage(out_name(n, b), ot.dtype, axes, y));
}

// Reshape, Flatten, Identity, Squeeze, Unsqueeze: the same elements in row-major order.
void lower_view(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int in = b.tensor(n.inputs[0]);
  const Shape is = b.te(in).shape;
  std::vector<Axis> axes = b.axes(ot.shape);
  Expr flat = make_int(0);
  for (const Axis& a : axes) flat = flat * a.extent + make_var(a.var_id, a.name);
  std::vector<Expr> idx(is.size());
  int64_t stride = 1;
  for (size_t d = is.size(); d-- > 0;) {
    Expr q = make_binary(BinaryOp::FloorDiv, flat, make_int(stride));
    idx[d] = d == 0 ? q : make_binary(BinaryOp::FloorMod, q, make_int(is[d]));
    stride *= is[d];
  }
  b.bind(out0(n), b.stage(out_name(n, b), ot.dtype, axes, b.load(in, idx)));
}

void lower_transpose(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int in = b.tensor(n.inputs[0]);
  const size_t rank = ot.shape.size();
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  std::vector<Axis> axes = b.axes(ot.shape);
  std::vector<Expr> out = TeBuilder::vars(axes), idx(rank);
  for (size_t i = 0; i < rank; ++i) idx[static_cast<size_t>(perm[i])] = out[i];
  b.bind(out0(n), b.stage(out_name(n, b), ot.dtype, axes, b.load(in, idx)));
}

void lower_concat(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int64_t rank = static_cast<int64_t>(ot.shape.size());
  int64_t axis = n.attr_int("axis");
  if (axis < 0) axis += rank;
  std::vector<Axis> axes = b.axes(ot.shape);
  std::vector<Expr> out = TeBuilder::vars(axes);
  // select(j < end0, in0[j], select(j < end1, in1[j - end0], ...)), built from the back.
  std::vector<std::pair<int64_t, int>> parts;  // (offset, tensor)
  int64_t offset = 0;
  for (int t : n.inputs) {
    const int te = b.tensor(t);
    parts.emplace_back(offset, te);
    offset += b.te(te).shape[static_cast<size_t>(axis)];
  }
  Expr body;
  for (size_t i = parts.size(); i-- > 0;) {
    std::vector<Expr> idx = out;
    idx[static_cast<size_t>(axis)] = out[static_cast<size_t>(axis)] - parts[i].first;
    Expr value = b.load(parts[i].second, idx);
    if (!body) {
      body = value;
      continue;
    }
    const int64_t end = i + 1 < parts.size() ? parts[i + 1].first : offset;
    body = make_select(make_binary(BinaryOp::LT, out[static_cast<size_t>(axis)], make_int(end)),
                       value, body);
  }
  b.bind(out0(n), b.stage(out_name(n, b), ot.dtype, axes, body));
}

void lower_gather(const Node& n, TeBuilder& b) {
  const TensorType& ot = b.graph().type(out0(n));
  const int data = b.tensor(n.inputs[0]), indices = b.tensor(n.inputs[1]);
  const Shape ds = b.te(data).shape;
  const size_t irank = b.te(indices).shape.size();
  int64_t axis = n.attr_int("axis");
  if (axis < 0) axis += static_cast<int64_t>(ds.size());
  const size_t a = static_cast<size_t>(axis);
  std::vector<Axis> axes = b.axes(ot.shape);
  std::vector<Expr> out = TeBuilder::vars(axes);
  std::vector<Expr> iidx(out.begin() + static_cast<long>(a),
                         out.begin() + static_cast<long>(a + irank));
  Expr i = make_cast(DType::Int64, b.load(indices, iidx));
  const int64_t extent = ds[a];
  // Negative indices count from the end; out-of-range ones are clamped, so that a bad
  // index can never read outside the tensor.
  i = make_select(make_binary(BinaryOp::LT, i, make_int(0)), i + extent, i);
  i = make_binary(BinaryOp::Min, make_binary(BinaryOp::Max, i, make_int(0)), make_int(extent - 1));
  std::vector<Expr> didx(out.begin(), out.begin() + static_cast<long>(a));
  didx.push_back(i);
  didx.insert(didx.end(), out.begin() + static_cast<long>(a + irank), out.end());
  b.bind(out0(n), b.stage(out_name(n, b), ot.dtype, axes, b.load(data, didx)));
}

}  // namespace tlmc::ir
