#include "ir/normalised_key.h"

#include <sstream>

#include "ir/diagnostic.h"
#include "ir/op_schema.h"

namespace tlmc::ir {
namespace {

std::string joined(const std::vector<int64_t>& v, const char* by) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? by : "") + std::to_string(v[i]);
  return out;
}

// The extents of `shape` from `first` to its end.
std::vector<int64_t> tail(const Shape& shape, size_t first) {
  return std::vector<int64_t>(shape.begin() + static_cast<std::ptrdiff_t>(first), shape.end());
}

size_t axis_of(int64_t axis, size_t rank) {
  return static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
}

// An ints attribute, or `fill` for each of `rank` axes where the model leaves it out (its
// ONNX default): a stride of 1 written or not is one family.
std::vector<int64_t> or_default(const Node& n, const char* name, size_t rank, int64_t fill) {
  if (n.attrs.count(name) && !n.attr_ints(name).empty()) return n.attr_ints(name);
  return std::vector<int64_t>(rank, fill);
}

// The window's strides, pads and dilations over `rank` spatial axes, defaults filled in.
void geometry(std::ostream& os, const Node& n, size_t rank) {
  os << " stride=" << joined(or_default(n, "strides", rank, 1), "x");
  if (n.attr_string("auto_pad") == "NOTSET")
    os << " pads=" << joined(or_default(n, "pads", 2 * rank, 0), ",");
  else
    os << " auto_pad=" << n.attr_string("auto_pad");
  if (n.op != "AveragePool")  // ONNX gives AveragePool no dilations before opset 19
    os << " dilation=" << joined(or_default(n, "dilations", rank, 1), "x");
}

std::string convolution(const Graph& g, const Node& n) {
  const Shape& w = g.type(n.inputs[1]).shape;  // [C_out, C_in / group, k...] (transposed:
  const int64_t group = n.attr_int("group");   // [C_in, C_out / group, k...])
  const bool transposed = n.op == "ConvTranspose";
  const int64_t cin = transposed ? w[0] : w[1] * group, cout = transposed ? w[1] * group : w[0];
  std::ostringstream os;
  os << n.op << " cin=" << cin << " cout=" << cout << " kernel=" << joined(tail(w, 2), "x");
  geometry(os, n, w.size() - 2);
  os << " groups=" << group;
  return os.str();
}

std::string product(const Graph& g, const Node& n) {
  const Tensor& b = g.tensor(n.inputs[1]);
  const Shape& s = b.type.shape;
  int64_t k = 0, nn = 0;
  Shape batch;
  if (n.op == "Gemm") {
    const bool trans = n.attr_int("transB") != 0;
    k = s[trans ? 1 : 0];
    nn = s[trans ? 0 : 1];
  } else if (s.size() == 1) {
    k = s[0];
    nn = 1;
  } else {
    k = s[s.size() - 2];
    nn = s.back();
    batch.assign(s.begin(), s.end() - 2);
  }
  const bool weight = b.kind == TensorKind::Weight;
  // An activation's first batch axis is the model's batch, when it has several.
  if (!weight && batch.size() > 1) batch.erase(batch.begin());
  int64_t batches = 1;
  for (int64_t e : batch) batches *= e;
  std::ostringstream os;
  os << "MatMul" << (weight ? "" : " of activations") << " k=" << k << " n=" << nn;
  if (batches > 1) os << " batches=" << batches;
  return os.str();
}

std::string pool(const Graph& g, const Node& n) {
  std::ostringstream os;
  os << n.op;
  if (n.op == "GlobalAveragePool") {
    // The spatial extents: [N, C, spatial...], [N, spatial..., C] or [N, C/B, spatial..., B].
    const Shape& in = g.type(n.inputs[0]).shape;
    const bool last = n.attr_int("channels_last") != 0, blocked = n.attr_int("channel_block") != 0;
    const std::vector<int64_t> spatial(in.begin() + (last ? 1 : 2),
                                       in.end() - (last || blocked ? 1 : 0));
    os << " over=" << joined(spatial, "x");
    return os.str();
  }
  const std::vector<int64_t>& kernel = n.attr_ints("kernel_shape");
  os << " kernel=" << joined(kernel, "x");
  geometry(os, n, kernel.size());
  os << " ceil_mode=" << n.attr_int("ceil_mode");
  if (n.op == "AveragePool") os << " count_include_pad=" << n.attr_int("count_include_pad");
  return os.str();
}

std::string reduction(const Graph& g, const Node& n) {
  const Shape& in = g.type(n.inputs[0]).shape;
  std::vector<int64_t> over;
  if (n.op == "Softmax") {
    over.push_back(in[axis_of(n.attr_int("axis"), in.size())]);
  } else if (n.op == "LayerNormalization") {
    over = tail(in, axis_of(n.attr_int("axis"), in.size()));
  } else {
    // Reduce*: the axes attribute (opset 13's ReduceMean and the like), else a second
    // input (ReduceSum's, a weight once folded); none means every axis.
    std::vector<int64_t> axes;
    if (n.attrs.count("axes")) axes = n.attr_ints("axes");
    if (axes.empty() && n.inputs.size() > 1 && n.inputs[1] >= 0)
      axes = weight_ints(g.tensor(n.inputs[1]));
    if (axes.empty()) {
      over = in;
    } else {
      std::vector<bool> reduced(in.size(), false);
      for (int64_t a : axes) reduced[axis_of(a, in.size())] = true;
      for (size_t i = 0; i < in.size(); ++i)
        if (reduced[i]) over.push_back(in[i]);
    }
  }
  return n.op + " over=" + joined(over, "x");
}

}  // namespace

std::string normalised_key(const Graph& g, const std::vector<int>& nodes) {
  for (int id : nodes) {
    const Node& n = g.nodes.at(static_cast<size_t>(id));
    const OpSchema* schema = find_op(n.op);
    if (!schema || schema->op_class != OpClass::Anchor) continue;
    if (n.op == "Conv" || n.op == "ConvTranspose") return convolution(g, n);
    if (n.op == "MatMul" || n.op == "Gemm") return product(g, n);
    if (n.op.find("Pool") != std::string::npos) return pool(g, n);
    return reduction(g, n);
  }
  std::string chain = "chain ";
  for (size_t i = 0; i < nodes.size(); ++i)
    chain += (i ? "," : "") + g.nodes.at(static_cast<size_t>(nodes[i])).op;
  return chain;
}

}  // namespace tlmc::ir
