#include "scheduler/channels_last_activations.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph_verify.h"
#include "ir/op_schema.h"
#include "ir/shape_rules.h"

namespace tlmc::scheduler {
namespace {

using ir::Graph;
using ir::Node;
using ir::Shape;

// Conv and the pools: they read and write the layout themselves (rank 3 to 5), when their
// channels are whole blocks of it.
bool is_windowed(const Graph& g, const Node& n, ir::ChannelLayout layout) {
  const bool op = n.op == "Conv" || n.op == "AveragePool" || n.op == "GlobalAveragePool" ||
                  (n.op == "MaxPool" && (n.outputs.size() == 1 || n.outputs[1] < 0));
  if (!op || !ir::channel_layout(n).channels_first()) return false;
  const Shape& in = g.type(n.inputs[0]).shape;
  const Shape& out = g.type(n.outputs[0]).shape;
  if (in.size() < 3 || in.size() > 5) return false;
  return !layout.block || (in[1] % layout.block == 0 && out[1] % layout.block == 0);
}

bool is_scalar(const Graph& g, int t) { return g.type(t).numel() == 1; }

// An element-wise operator with numpy broadcasting (BatchNormalization indexes its
// operands by channel instead), one result of rank 3 to 5, reading a channels-last result:
// it may follow, if each other operand can be moved (a constant, a scalar, or a tensor of
// the result's rank).
bool follows(const Graph& g, const Node& n, const std::set<int>& moved) {
  if (ir::find_op(n.op)->op_class != ir::OpClass::Elementwise || n.op == "BatchNormalization" ||
      n.outputs.size() != 1)
    return false;
  const size_t rank = g.type(n.outputs[0]).shape.size();
  if (rank < 3 || rank > 5) return false;
  bool reads_moved = false;
  for (int in : n.inputs) {
    if (in < 0) continue;
    const size_t r = g.type(in).shape.size();
    if (moved.count(in)) {
      if (r != rank) return false;
      reads_moved = true;
      continue;
    }
    if (r != rank && g.tensor(in).kind != ir::TensorKind::Weight && !is_scalar(g, in)) return false;
  }
  return reads_moved;
}

// The shape in `layout` of a tensor of shape `model` ([N, C, s...], or any operand
// broadcast to such a result): one of a single channel keeps one in the block too.
Shape moved_shape(const Shape& model, ir::ChannelLayout layout) {
  if (layout.block && model[1] == 1) {
    Shape s = model;
    s.push_back(1);
    return s;
  }
  return ir::layout_shape(model, layout);
}

// Builds the rewritten graph: tensors keep their ids (their types are inferred again), and
// a tensor moved to the layout that is also needed in the model's layout gets a new id.
class Rewriter {
 public:
  explicit Rewriter(const Graph& g) : g_(g), out_(g) {
    out_.nodes.clear();
    consumers_ = g.consumers();
  }

  // Node i moved to layouts[i] (channels-first: left as it is), in chain chains[i].
  LayoutRewrite rewrite(const std::vector<ir::ChannelLayout>& layouts,
                        const std::vector<int>& chains) {
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      if (!layouts[i].channels_first())
        for (int t : g_.nodes[i].outputs)
          if (t >= 0) moved_.insert(t);
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      chain_ = chains[i];
      layout_ = layouts[i];
      if (layout_.channels_first())
        emit(g_.nodes[i]);
      else
        rewrite_node(g_.nodes[i]);
    }
    return LayoutRewrite{ir::verify_graph(std::move(out_)), std::move(chain_of_node_)};
  }

 private:
  void rewrite_node(Node n) {
    const size_t rank = g_.type(n.outputs[0]).shape.size();
    if (ir::find_op(n.op)->op_class != ir::OpClass::Elementwise) {
      if (layout_.last) n.attrs["channels_last"] = ir::Attr{int64_t{1}, n.loc};
      if (layout_.block) n.attrs["channel_block"] = ir::Attr{layout_.block, n.loc};
      n.inputs[0] = layout_operand(n.inputs[0], rank);
    } else {
      for (int& in : n.inputs)
        if (in >= 0) in = layout_operand(in, rank);
    }
    // A result also read in the model's layout (by an operator that stays, or as a graph
    // output) is computed channels-last into a new tensor and converted back to its id.
    std::vector<std::pair<int, int>> back;
    for (int& t : n.outputs) {
      if (!needed_as_is(t)) continue;
      const int cl = add_tensor(g_.tensor(t).name + ".cl", g_.tensor(t).loc);
      moved_of_[{t, key(layout_)}] = cl;
      back.emplace_back(cl, t);
      t = cl;
    }
    const SourceLoc loc = n.loc;
    emit(std::move(n));
    for (const auto& [cl, t] : back) convert(cl, t, rank, false, loc);
  }

  bool needed_as_is(int t) const {
    if (g_.is_output(t)) return true;
    for (int c : consumers_[static_cast<size_t>(t)])
      if (!rewritten(c)) return true;
    return false;
  }
  bool rewritten(int node) const {
    for (int t : g_.nodes[static_cast<size_t>(node)].outputs)
      if (moved_.count(t)) return true;
    return false;
  }

  // The tensor holding operand t, in the current layout, of a node whose result has rank
  // `rank`.
  int layout_operand(int t, size_t rank) {
    if (auto it = moved_of_.find({t, key(layout_)}); it != moved_of_.end()) return it->second;
    // Produced in place: by a node of the same chain, so in the same layout.
    if (moved_.count(t)) return t;
    const ir::Tensor& src = g_.tensor(t);
    if (is_scalar(g_, t)) return t;  // one element: every layout is the same
    int cl = -1;
    if (src.kind == ir::TensorKind::Weight && src.data) {
      // A constant: moved now. A broadcast operand of lower rank counts as [1..., shape].
      Shape first(rank - src.type.shape.size(), 1);
      first.insert(first.end(), src.type.shape.begin(), src.type.shape.end());
      ir::Tensor w = src;
      w.name = unique_name(src.name + ".cl");
      w.type.shape = moved_shape(first, layout_);
      w.data = std::make_shared<const std::vector<uint8_t>>(
          first[1] == 1
              ? *src.data
              : ir::move_channels(*src.data, first, ir::dtype_size(src.type.dtype), layout_, true));
      out_.tensors.push_back(std::move(w));
      cl = static_cast<int>(out_.tensors.size()) - 1;
    } else {
      cl = add_tensor(src.name + ".cl", src.loc);
      convert(t, cl, rank, true, src.loc);
    }
    moved_of_[{t, key(layout_)}] = cl;
    return cl;
  }

  // Nodes writing `to` as `from` moved to the layout (to_layout) or back: a Reshape when no
  // element moves (one channel, or one position), else a Transpose, which blocked channels
  // precede (to the layout) or follow (back) with a Reshape between [N, C, s...] and
  // [N, C/B, B, s...].
  void convert(int from, int to, size_t rank, bool to_layout, const SourceLoc& loc) {
    const Shape& model = g_.type(to_layout ? from : to).shape;  // channels-first
    const int64_t positions = ir::shape_numel(model) / std::max<int64_t>(1, model[0] * model[1]);
    const std::string name = out_tensor_name(to);
    if (model[1] == 1 || positions == 1) {
      reshape(from, to, to_layout ? moved_shape(model, layout_) : model, name, loc);
      return;
    }
    std::vector<int64_t> perm = {0};
    if (layout_.last && to_layout) {
      for (size_t i = 2; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
      perm.push_back(1);
    } else if (layout_.last) {
      perm.push_back(static_cast<int64_t>(rank) - 1);
      for (size_t i = 1; i + 1 < rank; ++i) perm.push_back(static_cast<int64_t>(i));
    } else {
      // [N, C/B, B, s...] <-> [N, C/B, s..., B]
      perm.push_back(1);
      if (to_layout) {
        for (size_t i = 3; i <= rank; ++i) perm.push_back(static_cast<int64_t>(i));
        perm.push_back(2);
      } else {
        perm.push_back(static_cast<int64_t>(rank));
        for (size_t i = 2; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
      }
    }
    // Blocked channels pass through [N, C/B, B, s...]: reshaped to it before the Transpose
    // (to the layout), or from it after (back).
    int in = from, out = to;
    if (layout_.block && to_layout) {
      Shape split = {model[0], model[1] / layout_.block, layout_.block};
      split.insert(split.end(), model.begin() + 2, model.end());
      in = add_tensor(name + ".blocks", loc);
      reshape(from, in, split, name + ".blocks", loc);
    } else if (layout_.block) {
      out = add_tensor(name + ".blocks", loc);
    }
    Node c;
    c.name = name;
    c.loc = loc;
    c.op = "Transpose";
    c.inputs = {in};
    c.outputs = {out};
    c.attrs["perm"] = ir::Attr{perm, loc};
    emit(std::move(c));
    if (out != to) reshape(out, to, model, name + ".merge", loc);
  }

  // A Reshape node writing `to` as `from` in shape `shape`.
  void reshape(int from, int to, const Shape& shape, const std::string& name,
               const SourceLoc& loc) {
    ir::Tensor s;
    s.name = unique_name(name + ".shape");
    s.kind = ir::TensorKind::Weight;
    s.type = {ir::DType::Int64, {static_cast<int64_t>(shape.size())}};
    auto bytes = std::make_shared<std::vector<uint8_t>>(shape.size() * sizeof(int64_t));
    std::memcpy(bytes->data(), shape.data(), bytes->size());
    s.data = std::move(bytes);
    s.loc = loc;
    out_.tensors.push_back(std::move(s));
    Node c;
    c.name = name;
    c.loc = loc;
    c.op = "Reshape";
    c.inputs = {from, static_cast<int>(out_.tensors.size()) - 1};
    c.outputs = {to};
    emit(std::move(c));
  }

  // Appends a node of the current chain (a conversion belongs to the node it serves).
  void emit(Node n) {
    out_.nodes.push_back(std::move(n));
    chain_of_node_.push_back(chain_);
  }

  // A layout as a map key: -1 channels-last, else the block.
  static int64_t key(ir::ChannelLayout l) { return l.last ? -1 : l.block; }

  std::string out_tensor_name(int t) const { return out_.tensors[static_cast<size_t>(t)].name; }

  // A new intermediate tensor (its type is inferred by verification).
  int add_tensor(const std::string& name, const SourceLoc& loc) {
    ir::Tensor t;
    t.name = unique_name(name);
    t.loc = loc;
    out_.tensors.push_back(std::move(t));
    return static_cast<int>(out_.tensors.size()) - 1;
  }

  std::string unique_name(const std::string& base) {
    std::string name = base;
    for (int i = 1; out_.find_tensor(name) >= 0; ++i) name = base + std::to_string(i);
    return name;
  }

  const Graph& g_;
  Graph out_;
  std::vector<int> chain_of_node_;  // of out_'s nodes
  ir::ChannelLayout layout_;        // of the node being rewritten
  int chain_ = -1;                  // its chain
  std::vector<std::vector<int>> consumers_;
  std::set<int> moved_;  // results of rewritten nodes, in their node's layout
  std::map<std::pair<int, int64_t>, int> moved_of_;  // (tensor, layout key) -> its copy
};

}  // namespace

std::vector<int> activation_chains(const ir::Graph& g) {
  ir::ChannelLayout last;
  last.last = true;
  std::vector<int> root(g.nodes.size(), -1);  // union-find over the moved nodes
  auto find = [&](int i) {
    while (root[static_cast<size_t>(i)] != i) i = root[static_cast<size_t>(i)];
    return i;
  };
  std::map<int, int> producer;  // moved tensor -> its node
  std::set<int> moved;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (!is_windowed(g, n, last) && !follows(g, n, moved)) continue;
    root[i] = static_cast<int>(i);
    for (int in : n.inputs)
      if (auto it = producer.find(in); in >= 0 && it != producer.end())
        root[static_cast<size_t>(find(it->second))] = static_cast<int>(i);
    for (int t : n.outputs)
      if (t >= 0) {
        producer[t] = static_cast<int>(i);
        moved.insert(t);
      }
  }
  std::vector<int> chain(g.nodes.size(), -1);
  std::map<int, int> number;  // root -> chain, in order of first node
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (root[i] >= 0)
      chain[i] =
          number.emplace(find(static_cast<int>(i)), static_cast<int>(number.size())).first->second;
  return chain;
}

size_t chain_count(const std::vector<int>& chains) {
  return chains.empty() ? 0
                        : static_cast<size_t>(*std::max_element(chains.begin(), chains.end()) + 1);
}

std::optional<LayoutRewrite> activations_in(const ir::Graph& g, const std::vector<int>& chains,
                                            const std::vector<ir::ChannelLayout>& layouts) {
  std::vector<ir::ChannelLayout> of_node(g.nodes.size());
  std::set<int> moved;
  bool any = false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (chains[i] < 0) continue;
    const ir::ChannelLayout layout = layouts.at(static_cast<size_t>(chains[i]));
    if (layout.channels_first() || (!is_windowed(g, n, layout) && !follows(g, n, moved))) continue;
    of_node[i] = layout;
    any = true;
    for (int t : n.outputs)
      if (t >= 0) moved.insert(t);
  }
  if (!any) return std::nullopt;
  return Rewriter(g).rewrite(of_node, chains);
}

namespace {

std::optional<ir::Graph> whole_graph_in(const ir::Graph& g, ir::ChannelLayout layout) {
  const std::vector<int> chains = activation_chains(g);
  std::optional<LayoutRewrite> r =
      activations_in(g, chains, std::vector<ir::ChannelLayout>(chain_count(chains), layout));
  if (!r) return std::nullopt;
  return std::move(r->graph);
}

}  // namespace

std::optional<ir::Graph> channels_last_activations(const ir::Graph& g) {
  ir::ChannelLayout layout;
  layout.last = true;
  return whole_graph_in(g, layout);
}

std::optional<ir::Graph> blocked_activations(const ir::Graph& g, int64_t block) {
  ir::ChannelLayout layout;
  layout.block = block;
  return whole_graph_in(g, layout);
}

}  // namespace tlmc::scheduler
