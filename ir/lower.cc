#include "ir/lower.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "ir/flat_spatial.h"
#include "ir/lower_builder.h"
#include "ir/op_schema.h"

namespace tlmc::ir {

int TeBuilder::tensor(int graph_tensor_id) {
  auto it = bound_.find(graph_tensor_id);
  if (it != bound_.end()) return it->second;
  const Tensor& t = graph_.tensor(graph_tensor_id);
  TeTensor tt{t.name, t.type.dtype, t.type.shape, -1, t.kind == TensorKind::Weight};
  const int id = static_cast<int>(program_.tensors.size());
  program_.tensors.push_back(tt);
  program_.inputs.push_back(id);
  bound_[graph_tensor_id] = id;
  return id;
}

std::vector<Axis> TeBuilder::axes(const Shape& shape, const std::string& prefix) {
  std::vector<Axis> out;
  for (size_t i = 0; i < shape.size(); ++i)
    out.push_back(Axis{program_.next_var++, prefix + std::to_string(i), shape[i]});
  return out;
}

std::vector<Axis> TeBuilder::named_axes(const Shape& shape, const std::vector<std::string>& names) {
  TLMC_ASSERT(shape.size() == names.size(), "one name per axis");
  std::vector<Axis> out;
  for (size_t i = 0; i < shape.size(); ++i)
    out.push_back(Axis{program_.next_var++, names[i], shape[i]});
  return out;
}

Axis TeBuilder::reduce_axis(const std::string& name, int64_t extent) {
  return Axis{program_.next_var++, name, extent};
}

std::vector<Expr> TeBuilder::vars(const std::vector<Axis>& axes) {
  std::vector<Expr> out;
  for (const Axis& a : axes) out.push_back(make_var(a.var_id, a.name));
  return out;
}

int TeBuilder::stage(const std::string& name, DType t, const std::vector<Axis>& axes, Expr body,
                     ReduceKind reduce, const std::vector<Axis>& reduce_axes) {
  const int id = static_cast<int>(program_.tensors.size());
  Shape shape;
  for (const Axis& a : axes) shape.push_back(a.extent);
  program_.tensors.push_back(TeTensor{name, t, shape, static_cast<int>(program_.stages.size())});
  std::string op = node_ >= 0 ? graph_.nodes.at(static_cast<size_t>(node_)).op : "";
  for (char& c : op) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  program_.stages.push_back(
      Stage{name, id, axes, reduce_axes, reduce, make_cast(t, std::move(body)), op});
  return id;
}

Expr typed_constant(double v, DType t) {
  if (t == DType::Float32 || t == DType::Float64) return make_float(v, t);
  if (t == DType::Bool) return make_cast(DType::Bool, make_int(v != 0 ? 1 : 0));
  return make_cast(t, make_int(static_cast<int64_t>(v)));
}

Expr TeBuilder::load(int te_id, std::vector<Expr> indices) const {
  return make_load(te(te_id).dtype, te_id, std::move(indices));
}

Expr TeBuilder::load_f32(int te_id, std::vector<Expr> indices) const {
  return make_cast(DType::Float32, load(te_id, std::move(indices)));
}

Expr TeBuilder::broadcast_load(int te_id, const std::vector<Expr>& out) const {
  const Shape& s = te(te_id).shape;
  TLMC_ASSERT(s.size() <= out.size(),
              "broadcast of rank " << s.size() << " to rank " << out.size());
  std::vector<Expr> idx;
  const size_t skip = out.size() - s.size();
  for (size_t i = 0; i < s.size(); ++i) idx.push_back(s[i] == 1 ? make_int(0) : out[skip + i]);
  return load(te_id, std::move(idx));
}

LoweredSubgraph lower_subgraph(const Graph& g, const std::vector<int>& node_ids,
                               const LoweringChoices& choices) {
  if (choices.flat_spatial) {
    const std::optional<Graph> flat = flatten_spatial(g, node_ids);
    TLMC_ASSERT(flat, "spatial dimensions merged in a subgraph that is not pointwise");
    LoweringChoices rest = choices;
    rest.flat_spatial = false;
    return lower_subgraph(*flat, node_ids, rest);
  }
  LoweredSubgraph out;
  TeBuilder b(g, out.program, choices);
  std::set<int> inside(node_ids.begin(), node_ids.end());
  std::vector<int> sorted = node_ids;
  std::sort(sorted.begin(), sorted.end());  // node ids are in topological order
  for (int id : sorted) {
    const Node& n = g.nodes.at(static_cast<size_t>(id));
    LowerFn f = find_lowering(n.op);
    TLMC_ASSERT(f, "no lowering for operator " << n.op);
    b.set_node(id);
    f(n, b);
    for (int o : n.outputs)
      TLMC_ASSERT(o < 0 || b.is_bound(o), n.describe() << " left an output unbound");
  }
  const std::vector<std::vector<int>> consumers = g.consumers();
  for (int id : sorted) {
    // Every output another subgraph or the caller reads (a Split's parts may go to several).
    for (int o : g.nodes[static_cast<size_t>(id)].outputs) {
      if (o < 0) continue;
      bool needed_outside = g.is_output(o);
      for (int c : consumers[static_cast<size_t>(o)])
        needed_outside = needed_outside || !inside.count(c);
      if (!needed_outside) continue;
      out.program.outputs.push_back(b.tensor(o));
      out.output_tensors.push_back(o);
    }
  }
  for (int in : out.program.inputs) {
    const std::string& name = out.program.tensor(in).name;
    out.input_tensors.push_back(g.find_tensor(name));
  }
  verify_te(out.program);
  return out;
}

}  // namespace tlmc::ir
