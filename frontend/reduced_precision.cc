#include "frontend/reduced_precision.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/diagnostic.h"
#include "ir/graph_verify.h"
#include "reference/kernels.h"

namespace tlmc::frontend {
namespace {

// A convolution the bf16 unit computes as a matrix product per tap of its window
// (scheduler/tile_product.h): of one group, channels-last positions as A's rows, its weight
// a [M, C] matrix per tap. 1 x 1 convolutions of stride 1 and no padding are one such
// product whatever C; any other (a window, a stride, padding) sums over its taps, each over
// the C input channels, and takes 16 channels or more: a step of the unit spans 32, and a
// window over the 3 channels of an image's stem would leave most of each step empty (it
// stays in float32).
bool is_unit_conv(const ir::Graph& g, const ir::Node& n) {
  if (n.op != "Conv" || n.inputs.size() < 2 || n.attr_int("group") != 1) return false;
  const auto all = [](const std::vector<int64_t>& v, int64_t x) {
    return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
  };
  const ir::Shape& w = g.type(n.inputs[1]).shape;  // [M, C, k...]
  const bool pointwise = all(std::vector<int64_t>(w.begin() + 2, w.end()), 1) &&
                         all(n.attr_ints("strides"), 1) && all(n.attr_ints("pads"), 0);
  return pointwise || (w.size() >= 2 && w[1] >= 16);
}

// A depthwise convolution (one input channel per group) is no product the unit computes,
// but its input is the widest tensor of an inverted residual block (MobileNet's expanded
// channels): rounded, the 1 x 1 convolution before it writes it in bfloat16, half the bytes,
// and the depthwise one reads it widened once into its padded copy (ir/lower_ops_nn.cc),
// computing in float32 from there. OpenVINO's default rounds these convolutions so too. On
// a 2-core Intel Xeon with AMX, MobileNetV2 at -O0 --precision bf16 went from 1888 to 1690
// us (the sum of its kernels' medians, --profile).
bool is_depthwise(const ir::Graph& g, const ir::Node& n) {
  if (n.op != "Conv" || n.inputs.size() < 2) return false;
  const ir::Shape& w = g.type(n.inputs[1]).shape;  // [M, C / group, k...]
  return w.size() >= 3 && w[1] == 1 && n.attr_int("group") == w[0] && w[0] > 1;
}

// The products whose first two inputs are the operands rounded to bfloat16: matrix products,
// and the convolutions the unit computes (is_unit_conv), where the second operand (B, read
// along the columns of the output and the reduction) is a weight. The unit reads B packed in
// rows of bfloat16 pairs, which a weight is once at compile time; an activation as B (the
// products of attention: scores, and their product with the values) would have to be
// packed as the kernel runs, which tlmc does not do, and computed by loops widening bfloat16
// such products ran at 0.54-0.69x their float32 speed (bench_kernels_bf16's W5, U7 and U9 on
// a 2-core Intel Xeon with AMX): they stay float32.
bool is_demotable(const ir::Graph& g, const ir::Node& n, PrecisionOptions::Ops ops) {
  if (n.inputs.size() < 2 || n.inputs[1] < 0 ||
      g.tensor(n.inputs[1]).kind != ir::TensorKind::Weight)
    return false;
  if (n.op == "MatMul" || n.op == "Gemm") return ops != PrecisionOptions::Ops::Conv;
  return (is_unit_conv(g, n) || is_depthwise(g, n)) && ops != PrecisionOptions::Ops::MatMul;
}

bool is_product(const ir::Node& n) {
  return n.op == "MatMul" || n.op == "Gemm" || n.op == "Conv" || n.op == "ConvTranspose";
}

// --bf16-storage shared: an activation rounded for the products that read it (t, its copy
// `rounded[t]`) which other nodes read too, in float32, is read by each of them widened from
// the copy (a Cast to float32 of its own, which its kernel computes in its loads:
// scheduler/partition.cc), so that t's producer stores the copy alone. Not where t is a graph
// input or output (in float32 however it is read), nor where a product that stays float32
// reads it (it reads float32: --keep-fp32, or a product of two activations).
void share_rounded_activations(ir::Graph& out, const std::map<int, int>& rounded) {
  const std::vector<std::vector<int>> consumers = out.consumers();
  const std::vector<int> producers = out.producers();
  std::map<int, int> shared;  // t -> its copy
  for (const auto& [t, copy] : rounded) {
    if (out.tensor(t).kind == ir::TensorKind::Weight || out.is_output(t) ||
        producers[static_cast<size_t>(t)] < 0)
      continue;
    bool float32_product = false;
    for (int r : consumers[static_cast<size_t>(t)])
      float32_product = float32_product || is_product(out.nodes[static_cast<size_t>(r)]);
    if (!float32_product) shared[t] = copy;
  }
  // The Cast rounding each shared t: moved to follow t's producer, so that every reader of
  // the copy comes after it.
  auto rounds_shared = [&](const ir::Node& n) {
    if (n.op != "Cast" || n.inputs.size() != 1) return false;
    const auto it = shared.find(n.inputs[0]);
    return it != shared.end() && n.outputs == std::vector<int>{it->second};
  };
  std::map<int, ir::Node> cast_of;  // t -> the Cast computing its copy
  for (const ir::Node& n : out.nodes)
    if (rounds_shared(n)) cast_of[n.inputs[0]] = n;
  std::vector<ir::Node> nodes;
  for (const ir::Node& n : out.nodes) {
    if (rounds_shared(n)) continue;
    ir::Node reader = n;
    for (int& in : reader.inputs) {
      if (in < 0 || !shared.count(in)) continue;
      ir::Tensor widened = out.tensor(in);
      widened.name = ir::unused_tensor_name(out, widened.name + ".widened");
      const int id = static_cast<int>(out.tensors.size());
      nodes.push_back(
          ir::float_cast_node(widened.name, shared.at(in), id, ir::DType::Float32, n.loc));
      out.tensors.push_back(widened);
      in = id;
    }
    nodes.push_back(reader);
    for (int t : n.outputs)
      if (t >= 0 && shared.count(t)) nodes.push_back(cast_of.at(t));
  }
  out.nodes = std::move(nodes);
}

}  // namespace

ir::Graph demote_products_to_bf16(const ir::Graph& g, const PrecisionOptions& options) {
  std::set<std::string> keep(options.keep_fp32.begin(), options.keep_fp32.end());
  for (const std::string& name : keep) {
    const bool found = std::any_of(g.nodes.begin(), g.nodes.end(), [&](const ir::Node& n) {
      return n.name == name && is_product(n);
    });
    if (!found)
      throw Diagnostic({}, "--keep-fp32 names '" + name +
                               "', which is not a matrix product or convolution of the model "
                               "(--dump graph lists the nodes)");
  }
  ir::Graph out = g;
  out.nodes.clear();
  std::map<int, int> rounded;  // float32 tensor -> its bfloat16 copy
  for (const ir::Node& n : g.nodes) {
    if (!is_demotable(g, n, options.ops) || keep.count(n.name) ||
        g.type(n.inputs[0]).dtype != ir::DType::Float32 ||
        g.type(n.inputs[1]).dtype != ir::DType::Float32) {
      out.nodes.push_back(n);
      continue;
    }
    ir::Node product = n;
    product.attrs["float32_output"] = ir::Attr{int64_t{1}, n.loc};
    for (size_t i = 0; i < 2; ++i) {
      const int t = n.inputs[i];
      auto known = rounded.find(t);
      if (known == rounded.end()) {
        const ir::Tensor& from = g.tensor(t);
        ir::Tensor copy;
        copy.name = ir::unused_tensor_name(out, from.name + ".bf16");
        copy.type = {ir::DType::BFloat16, from.type.shape};
        copy.loc = from.loc;
        copy.kind = from.kind == ir::TensorKind::Weight ? ir::TensorKind::Weight
                                                        : ir::TensorKind::Intermediate;
        if (from.kind == ir::TensorKind::Weight) {  // converted now, once
          const std::vector<double> values = ir::weight_values(from);
          auto bytes = std::make_shared<std::vector<uint8_t>>(2 * values.size());
          for (size_t e = 0; e < values.size(); ++e)
            reference::store_element(ir::DType::BFloat16, values[e], bytes->data() + 2 * e);
          copy.data = bytes;
        }
        const int id = static_cast<int>(out.tensors.size());
        out.tensors.push_back(copy);
        if (from.kind != ir::TensorKind::Weight)
          out.nodes.push_back(ir::float_cast_node(copy.name, t, id, ir::DType::BFloat16, n.loc));
        known = rounded.emplace(t, id).first;
      }
      product.inputs[i] = known->second;
    }
    out.nodes.push_back(product);
  }
  if (options.storage == PrecisionOptions::Storage::Shared) share_rounded_activations(out, rounded);
  // Weights no node reads any more (every reader takes the bfloat16 copy) leave the graph.
  std::vector<bool> read(out.tensors.size(), false);
  for (const ir::Node& n : out.nodes)
    for (int t : n.inputs)
      if (t >= 0) read[static_cast<size_t>(t)] = true;
  for (int t : out.outputs) read[static_cast<size_t>(t)] = true;
  std::vector<int> renumber(out.tensors.size(), -1);
  std::vector<ir::Tensor> kept;
  for (size_t t = 0; t < out.tensors.size(); ++t) {
    if (out.tensors[t].kind == ir::TensorKind::Weight && !read[t]) continue;
    renumber[t] = static_cast<int>(kept.size());
    kept.push_back(std::move(out.tensors[t]));
  }
  out.tensors = std::move(kept);
  auto remap = [&](std::vector<int>& ids) {
    for (int& id : ids)
      if (id >= 0) id = renumber[static_cast<size_t>(id)];
  };
  for (ir::Node& n : out.nodes) {
    remap(n.inputs);
    remap(n.outputs);
  }
  remap(out.inputs);
  remap(out.outputs);
  return ir::verify_graph(std::move(out));
}

std::vector<int> bf16_products_in_series(const ir::Graph& g) {
  std::vector<int> depth(g.tensors.size(), 0);
  for (const ir::Node& n : g.nodes) {
    int deepest = 0;
    bool bf16_operand = false;
    for (int t : n.inputs) {
      if (t < 0) continue;
      deepest = std::max(deepest, depth[static_cast<size_t>(t)]);
      bf16_operand = bf16_operand || g.type(t).dtype == ir::DType::BFloat16;
    }
    const int mine = deepest + (is_product(n) && bf16_operand ? 1 : 0);
    for (int t : n.outputs) depth[static_cast<size_t>(t)] = mine;
  }
  std::vector<int> out;
  for (int t : g.outputs) out.push_back(depth[static_cast<size_t>(t)]);
  return out;
}

}  // namespace tlmc::frontend
