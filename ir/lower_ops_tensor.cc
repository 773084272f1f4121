// Lowerings of the operators that make tensors from shapes (Shape, ConstantOfShape, Range)
// and of the data-movement operators Expand, Slice, Split, Pad and Tile.
#include "ir/lower_ops.h"
#include "ir/shape_rules.h"

namespace tlmc::ir {
namespace {

int out0(const Node& n) { return n.outputs.at(0); }
const std::string& out_name(const Node& n, TeBuilder& b) { return b.graph().tensor(out0(n)).name; }
Expr lt(Expr a, Expr b) { return make_binary(BinaryOp::LT, std::move(a), std::move(b)); }
Expr all_of(const Expr& a, const Expr& b) { return a ? make_binary(BinaryOp::And, a, b) : b; }

// A stage over the node's output 0 computing `body(output indices)`.
template <typename F>
void output_stage(const Node& n, TeBuilder& b, F body) {
  const TensorType& ot = b.graph().type(out0(n));
  std::vector<Axis> axes = b.axes(ot.shape);
  b.bind(out0(n), b.stage(out_name(n, b), ot.dtype, axes, body(TeBuilder::vars(axes))));
}

}  // namespace

// The dimensions as constants, picked by the index: select(i < 1, d0, select(i < 2, d1, ...)).
// (Shape nodes are folded at compile time; this runs only for graphs that skip folding.)
void lower_shape(const Node& n, TeBuilder& b) {
  const Shape& x = b.graph().type(n.inputs[0]).shape;
  const DimRange r = shape_range(n, static_cast<int64_t>(x.size()));
  output_stage(n, b, [&](const std::vector<Expr>& o) {
    if (r.end == r.begin) return make_int(0);
    Expr body = make_int(x[static_cast<size_t>(r.end - 1)]);
    for (int64_t d = r.end - 1; d-- > r.begin;)
      body = make_select(lt(o[0], make_int(d - r.begin + 1)), make_int(x[static_cast<size_t>(d)]),
                         body);
    return body;
  });
}

void lower_constant_of_shape(const Node& n, TeBuilder& b) {
  const DType t = b.graph().type(out0(n)).dtype;
  output_stage(n, b,
               [&](const std::vector<Expr>&) { return typed_constant(n.attr_float("value"), t); });
}

// start + i * delta (the reference accumulates, as ONNX defines: equal for integers).
void lower_range(const Node& n, TeBuilder& b) {
  const Graph& g = b.graph();
  const DType t = g.type(out0(n)).dtype;
  output_stage(n, b, [&](const std::vector<Expr>& o) {
    if (t == DType::Float32)
      return make_float(constant_scalar(g, n, 0, "start")) +
             make_cast(DType::Float32, o[0]) * make_float(constant_scalar(g, n, 2, "delta"));
    const int64_t start = weight_ints(g.tensor(n.inputs[0])).at(0);
    const int64_t delta = weight_ints(g.tensor(n.inputs[2])).at(0);
    return make_cast(t, o[0] * delta + start);
  });
}

void lower_expand(const Node& n, TeBuilder& b) {
  const int x = b.tensor(n.inputs[0]);
  output_stage(n, b, [&](const std::vector<Expr>& o) { return b.broadcast_load(x, o); });
}

// Output element c reads input element start + c * step.
void lower_slice(const Node& n, TeBuilder& b) {
  const SliceGeometry s = slice_geometry(b.graph(), n);
  const int x = b.tensor(n.inputs[0]);
  output_stage(n, b, [&](const std::vector<Expr>& o) {
    std::vector<Expr> idx;
    for (size_t d = 0; d < o.size(); ++d) idx.push_back(o[d] * s.step[d] + s.start[d]);
    return b.load(x, idx);
  });
}

// One stage per output: part k reads the input from the sum of the parts before it on.
void lower_split(const Node& n, TeBuilder& b) {
  const SplitGeometry s = split_geometry(b.graph(), n);
  const int x = b.tensor(n.inputs[0]);
  const size_t axis = static_cast<size_t>(s.axis);
  int64_t offset = 0;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const int out = n.outputs[k];
    const int64_t begin = offset;
    offset += s.sizes[k];
    if (out < 0) continue;
    const TensorType& ot = b.graph().type(out);
    std::vector<Axis> axes = b.axes(ot.shape);
    std::vector<Expr> idx = TeBuilder::vars(axes);
    idx[axis] = idx[axis] + begin;
    b.bind(out, b.stage(b.graph().tensor(out).name, ot.dtype, axes, b.load(x, idx)));
  }
}

// Output position o reads input position o - pad_begin: constant outside the input, the
// nearest element (edge), or the mirror image without repeating the border (reflect).
void lower_pad(const Node& n, TeBuilder& b) {
  const PadGeometry p = pad_geometry(b.graph(), n);
  const int x = b.tensor(n.inputs[0]);
  const Shape xs = b.te(x).shape;
  output_stage(n, b, [&](const std::vector<Expr>& o) {
    std::vector<Expr> idx;
    Expr inside;
    for (size_t d = 0; d < o.size(); ++d) {
      Expr src = o[d] - p.begin[d];
      const int64_t last = xs[d] - 1;
      if (p.mode == PadMode::Constant) {
        if (p.begin[d] > 0) inside = all_of(inside, make_binary(BinaryOp::LE, make_int(0), src));
        if (p.end[d] > 0) inside = all_of(inside, lt(src, make_int(xs[d])));
      } else if (p.mode == PadMode::Edge && (p.begin[d] > 0 || p.end[d] > 0)) {
        src = make_binary(BinaryOp::Min, make_binary(BinaryOp::Max, src, make_int(0)),
                          make_int(last));
      } else if (p.mode == PadMode::Reflect && (p.begin[d] > 0 || p.end[d] > 0)) {
        src = make_select(lt(src, make_int(0)), make_int(0) - src,
                          make_select(lt(src, make_int(xs[d])), src, make_int(2 * last) - src));
      }
      idx.push_back(src);
    }
    Expr value = b.load(x, idx);
    if (!inside) return value;
    return make_select(inside, value, typed_constant(p.value, b.te(x).dtype));
  });
}

void lower_tile(const Node& n, TeBuilder& b) {
  const int x = b.tensor(n.inputs[0]);
  const Shape xs = b.te(x).shape;
  const Shape& os = b.graph().type(out0(n)).shape;
  output_stage(n, b, [&](const std::vector<Expr>& o) {
    std::vector<Expr> idx;
    for (size_t d = 0; d < o.size(); ++d)
      idx.push_back(os[d] == xs[d] ? o[d] : make_binary(BinaryOp::FloorMod, o[d], make_int(xs[d])));
    return b.load(x, idx);
  });
}

}  // namespace tlmc::ir
