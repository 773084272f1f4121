#include "frontend/fold_constants.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "ir/graph_verify.h"
#include "reference/interpreter.h"

namespace tlmc::frontend {
namespace {

// Folded results larger than this stay computed at run time: a weight blob should not
// grow by orders of magnitude because a constant was broadcast.
constexpr size_t kMaxFoldedBytes = 64u << 20;

bool is_weight(const ir::Graph& g, int t) {
  return t >= 0 && g.tensor(t).kind == ir::TensorKind::Weight;
}

// Known at compile time: a Shape (it reads only its input's static type) or a node whose
// inputs are all weights.
bool is_constant(const ir::Graph& g, const ir::Node& n) {
  if (n.op == "Shape") return true;
  return std::all_of(n.inputs.begin(), n.inputs.end(),
                     [&](int in) { return in < 0 || is_weight(g, in); });
}

class Folder {
 public:
  explicit Folder(ir::Graph g) : g_(std::move(g)) {
    for (const ir::Tensor& t : g_.tensors) names_.insert(t.name);
  }

  ir::Graph run() {
    std::vector<ir::Node> kept;
    const std::vector<std::vector<int>> readers = g_.consumers();
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const ir::Node& n = g_.nodes[i];
      if (evaluate(n)) continue;
      if (n.op == "BatchNormalization" && fold_batch_norm(n, kept, readers)) continue;
      kept.push_back(n);
    }
    g_.nodes = std::move(kept);
    drop_unused_tensors();
    return ir::verify_graph(std::move(g_));
  }

  // Tensors nothing reads or writes any more (a folded Conv's raw output, the weights that
  // were folded away) leave the graph; tensor ids are renumbered.
  void drop_unused_tensors() {
    std::vector<bool> used(g_.tensors.size(), false);
    for (int t : g_.inputs) used[static_cast<size_t>(t)] = true;
    for (int t : g_.outputs) used[static_cast<size_t>(t)] = true;
    for (const ir::Node& n : g_.nodes) {
      for (int t : n.inputs)
        if (t >= 0) used[static_cast<size_t>(t)] = true;
      for (int t : n.outputs)
        if (t >= 0) used[static_cast<size_t>(t)] = true;
    }
    std::vector<int> new_id(g_.tensors.size(), -1);
    std::vector<ir::Tensor> tensors;
    for (size_t t = 0; t < g_.tensors.size(); ++t) {
      if (!used[t]) continue;
      new_id[t] = static_cast<int>(tensors.size());
      tensors.push_back(std::move(g_.tensors[t]));
    }
    auto remap = [&](std::vector<int>& ids) {
      for (int& t : ids)
        if (t >= 0) t = new_id[static_cast<size_t>(t)];
    };
    remap(g_.inputs);
    remap(g_.outputs);
    for (ir::Node& n : g_.nodes) {
      remap(n.inputs);
      remap(n.outputs);
    }
    g_.tensors = std::move(tensors);
  }

 private:
  // A node of constant inputs becomes weights holding its values; so does a Shape node,
  // whatever its input: every shape is static.
  bool evaluate(const ir::Node& n) {
    size_t bytes = 0;
    for (int out : n.outputs)
      if (out >= 0) bytes += g_.type(out).bytes();
    if (bytes > kMaxFoldedBytes || !is_constant(g_, n)) return false;
    std::vector<reference::HostTensor> values = reference::evaluate_constant_node(g_, n);
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i] < 0) continue;
      ir::Tensor& t = g_.tensors[static_cast<size_t>(n.outputs[i])];
      t.kind = ir::TensorKind::Weight;
      t.data = std::make_shared<const std::vector<uint8_t>>(std::move(values[i].bytes));
    }
    return true;
  }

  int add_weight(const std::string& base, const ir::Shape& shape, const std::vector<float>& values,
                 const SourceLoc& loc) {
    std::string name = base;
    for (int k = 2; names_.count(name); ++k) name = base + "." + std::to_string(k);
    names_.insert(name);
    ir::Tensor t;
    t.name = name;
    t.type = ir::TensorType{ir::DType::Float32, shape};
    t.kind = ir::TensorKind::Weight;
    t.data = ir::float_bytes(values);
    t.loc = loc;
    g_.tensors.push_back(t);
    return static_cast<int>(g_.tensors.size()) - 1;
  }

  // y = (x - mean) * scale / sqrt(var + eps) + bias = x * s + t, per channel (dimension 1).
  bool fold_batch_norm(const ir::Node& n, std::vector<ir::Node>& kept,
                       const std::vector<std::vector<int>>& readers) {
    for (size_t i = 1; i < 5; ++i)
      if (!is_weight(g_, n.inputs[i])) return false;
    const std::vector<double> gamma = ir::weight_values(g_.tensor(n.inputs[1])),
                              beta = ir::weight_values(g_.tensor(n.inputs[2])),
                              mean = ir::weight_values(g_.tensor(n.inputs[3])),
                              var = ir::weight_values(g_.tensor(n.inputs[4]));
    const double eps = n.attr_float("epsilon");
    const size_t channels = gamma.size();
    std::vector<double> s(channels), t(channels);
    for (size_t c = 0; c < channels; ++c) {
      s[c] = gamma[c] / std::sqrt(var[c] + eps);
      t[c] = beta[c] - mean[c] * s[c];
    }
    const int x = n.inputs[0], y = n.outputs[0];
    if (fold_into_conv(x, y, s, t, kept, readers)) return true;
    // Otherwise x * s + t, with s and t shaped [C, 1, ...] to broadcast over dimension 1.
    ir::Shape pshape = {static_cast<int64_t>(channels)};
    for (size_t d = 2; d < g_.type(x).shape.size(); ++d) pshape.push_back(1);
    const std::string yn = g_.tensor(y).name;  // a copy: add_weight grows the tensor list
    const int sw = add_weight(yn + ".scale", pshape, std::vector<float>(s.begin(), s.end()), n.loc);
    const int tw = add_weight(yn + ".shift", pshape, std::vector<float>(t.begin(), t.end()), n.loc);
    ir::Tensor mid = g_.tensor(y);
    mid.name = yn + ".scaled";
    for (int k = 2; names_.count(mid.name); ++k) mid.name = yn + ".scaled." + std::to_string(k);
    names_.insert(mid.name);
    mid.kind = ir::TensorKind::Intermediate;
    g_.tensors.push_back(mid);
    const int m = static_cast<int>(g_.tensors.size()) - 1;
    ir::Node mul{n.name, "Mul", {x, sw}, {m}, {}, n.loc};
    ir::Node add{n.name, "Add", {m, tw}, {y}, {}, n.loc};
    kept.push_back(mul);
    kept.push_back(add);
    return true;
  }

  // Conv -> BatchNormalization, the Conv's result read by nothing else: W' = W * s per
  // output channel, b' = b * s + t, and the Conv writes the normalised tensor itself.
  bool fold_into_conv(int x, int y, const std::vector<double>& s, const std::vector<double>& t,
                      std::vector<ir::Node>& kept, const std::vector<std::vector<int>>& readers) {
    if (readers[static_cast<size_t>(x)].size() != 1 || g_.is_output(x)) return false;
    auto producer = std::find_if(kept.rbegin(), kept.rend(),
                                 [&](const ir::Node& k) { return k.outputs[0] == x; });
    if (producer == kept.rend()) return false;
    ir::Node& conv = *producer;
    if (conv.op != "Conv" || !is_weight(g_, conv.inputs[1])) return false;
    const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] >= 0;
    if (has_bias && !is_weight(g_, conv.inputs[2])) return false;
    const ir::Tensor& w = g_.tensor(conv.inputs[1]);
    const std::vector<double> wv = ir::weight_values(w);
    const size_t channels = s.size(), per_channel = wv.size() / channels;
    std::vector<float> nw(wv.size()), nb(channels);
    for (size_t c = 0; c < channels; ++c) {
      for (size_t i = 0; i < per_channel; ++i)
        nw[c * per_channel + i] = static_cast<float>(wv[c * per_channel + i] * s[c]);
      const double b = has_bias ? ir::weight_values(g_.tensor(conv.inputs[2]))[c] : 0.0;
      nb[c] = static_cast<float>(b * s[c] + t[c]);
    }
    const ir::Shape wshape = w.type.shape;
    const std::string yn = g_.tensor(y).name;  // a copy: add_weight grows the tensor list
    const int nwi = add_weight(yn + ".folded_w", wshape, nw, conv.loc);
    const int nbi = add_weight(yn + ".folded_b", {static_cast<int64_t>(channels)}, nb, conv.loc);
    conv.inputs.resize(3);
    conv.inputs[1] = nwi;
    conv.inputs[2] = nbi;
    conv.outputs[0] = y;
    return true;
  }

  ir::Graph g_;
  std::set<std::string> names_;
};

}  // namespace

ir::Graph fold_constants(const ir::Graph& g) { return Folder(g).run(); }

}  // namespace tlmc::frontend
