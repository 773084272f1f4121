#include "ir/graph_verify.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <string>
#include <vector>

#include "ir/op_schema.h"

namespace tlmc::ir {
namespace {

std::string where(const SourceLoc& loc) {
  if (loc.file.empty()) return "an unknown position";
  if (loc.line <= 0) return loc.file;
  return loc.file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.column);
}

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

std::string count_str(int n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// "1 input", "2 to 3 inputs", "at least 1 input".
std::string arity_str(int lo, int hi, const char* noun) {
  if (lo == hi) return count_str(lo, noun);
  if (hi < 0 || hi == std::numeric_limits<int>::max()) return "at least " + count_str(lo, noun);
  return std::to_string(lo) + " to " + count_str(hi, noun);
}

bool is_c_identifier(const std::string& s) {
  if (s.empty()) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!letter(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return letter(c) || digit(c); });
}

void check_tensor_id(const Graph& g, int id, const std::string& what) {
  TLMC_ASSERT(id >= 0 && static_cast<size_t>(id) < g.tensors.size(),
              what << " refers to tensor id " << id << " of " << g.tensors.size());
}

void check_limits(const Shape& shape, const SourceLoc& loc, const std::string& tensor) {
  const std::string why = shape_beyond_limits(shape);
  if (!why.empty())
    throw Diagnostic(loc, "tensor " + in_quotes(tensor) + " of shape " + shape_str(shape) +
                              " is beyond tlmc's limits: " + why);
}

// An integer attribute's values are within kMaxAttributeMagnitude unless its spec clamps them.
void check_attribute_magnitude(const Node& n, const std::string& key, const Attr& attr,
                               const AttrSpec& spec) {
  if (spec.clamped) return;
  std::vector<int64_t> values;
  if (const auto* v = std::get_if<int64_t>(&attr.value)) values.push_back(*v);
  if (const auto* v = std::get_if<std::vector<int64_t>>(&attr.value)) values = *v;
  for (int64_t v : values)
    if (v > kMaxAttributeMagnitude || v < -kMaxAttributeMagnitude)
      throw Diagnostic(attr.loc, "attribute " + in_quotes(key) + " of " + n.describe() +
                                     " has the value " + std::to_string(v) +
                                     ", beyond tlmc's limit of +-(2^31 - 1)");
}

// Names are unique; graph inputs are exactly the Input tensors; weights carry their bytes.
void check_tensors(const Graph& g) {
  std::map<std::string, int> by_name;
  for (size_t i = 0; i < g.tensors.size(); ++i) {
    const Tensor& t = g.tensors[i];
    auto [it, fresh] = by_name.emplace(t.name, static_cast<int>(i));
    if (!fresh)
      throw Diagnostic(t.loc, "tensor " + in_quotes(t.name) + " is already defined at " +
                                  where(g.tensors[static_cast<size_t>(it->second)].loc));
    if (t.kind != TensorKind::Intermediate) check_limits(t.type.shape, t.loc, t.name);
    if (t.kind == TensorKind::Weight) {
      TLMC_ASSERT(t.data, "weight " << t.name << " has no data");
      if (t.data->size() != t.type.bytes())
        throw Diagnostic(t.loc,
                         "weight " + in_quotes(t.name) + " has " + std::to_string(t.data->size()) +
                             " bytes of data, but " + std::string(dtype_name(t.type.dtype)) + " " +
                             shape_str(t.type.shape) + " needs " + std::to_string(t.type.bytes()));
    }
  }
  std::vector<int> listed(g.tensors.size(), 0);
  for (int id : g.inputs) {
    check_tensor_id(g, id, "graph input");
    const Tensor& t = g.tensor(id);
    TLMC_ASSERT(t.kind == TensorKind::Input, "graph input " << t.name << " is not an Input");
    TLMC_ASSERT(listed[static_cast<size_t>(id)] == 0, "input " << t.name << " listed twice");
    listed[static_cast<size_t>(id)] = 1;
  }
  for (size_t i = 0; i < g.tensors.size(); ++i)
    TLMC_ASSERT(g.tensors[i].kind != TensorKind::Input || listed[i] == 1,
                "Input tensor " << g.tensors[i].name << " is not among the graph inputs");
}

// Every node's operator exists; arity fits; attributes are known, of the right kind, and
// completed from the defaults.
void check_node_against_schema(Node& n, int opset) {
  const OpSchema* schema = find_op(n.op);
  if (!schema)
    throw Diagnostic(
        n.loc, "unknown operator " + in_quotes(n.op) + " (supported: " + supported_op_list() + ")");
  if (schema->since_opset > opset)
    throw Diagnostic(n.loc, n.describe() + " needs opset " + std::to_string(schema->since_opset) +
                                " or newer, but the model uses opset " + std::to_string(opset));
  const int n_in = static_cast<int>(n.inputs.size());
  const int n_out = static_cast<int>(n.outputs.size());
  if (n_in < schema->min_inputs || (schema->max_inputs >= 0 && n_in > schema->max_inputs))
    throw Diagnostic(n.loc, n.describe() + " takes " +
                                arity_str(schema->min_inputs, schema->max_inputs, "input") +
                                ", got " + std::to_string(n_in));
  if (n_out < schema->min_outputs || (schema->max_outputs >= 0 && n_out > schema->max_outputs))
    throw Diagnostic(n.loc, n.describe() + " has " +
                                arity_str(schema->min_outputs, schema->max_outputs, "output") +
                                ", got " + std::to_string(n_out));
  for (int i = 0; i < schema->min_inputs && i < n_in; ++i)
    if (n.inputs[static_cast<size_t>(i)] < 0)
      throw Diagnostic(n.loc, "input " + std::to_string(i) + " of " + n.describe() +
                                  " is required and cannot be omitted");
  for (int i = 0; i < schema->min_outputs && i < n_out; ++i)
    if (n.outputs[static_cast<size_t>(i)] < 0)
      throw Diagnostic(n.loc, "output " + std::to_string(i) + " of " + n.describe() +
                                  " is required and cannot be omitted");
  // Trailing omitted outputs are as good as absent (ONNX); dropping them spares every
  // later pass a check for -1 there.
  while (!n.outputs.empty() && n.outputs.back() < 0) n.outputs.pop_back();

  for (auto& [key, attr] : n.attrs) {
    const std::string& name = key;  // lambdas cannot capture structured bindings in C++17
    auto spec = std::find_if(schema->attrs.begin(), schema->attrs.end(),
                             [&](const AttrSpec& s) { return s.name == name; });
    if (spec == schema->attrs.end()) {
      std::string known;
      for (const AttrSpec& s : schema->attrs) known += (known.empty() ? "" : ", ") + s.name;
      throw Diagnostic(attr.loc,
                       n.describe() + " has no attribute " + in_quotes(key) +
                           (known.empty() ? " (it takes none)" : " (it has: " + known + ")"));
    }
    const AttrKind want = attr_kind(spec->default_value);
    const AttrKind got = attr_kind(attr.value);
    if (want == AttrKind::Int || want == AttrKind::Ints)
      check_attribute_magnitude(n, key, attr, *spec);
    if (want == got) continue;
    if (want == AttrKind::Float && got == AttrKind::Int) {
      attr.value = static_cast<double>(std::get<int64_t>(attr.value));
      continue;
    }
    if (want == AttrKind::Floats && got == AttrKind::Ints) {
      const auto& ints = std::get<std::vector<int64_t>>(attr.value);
      attr.value = std::vector<double>(ints.begin(), ints.end());
      continue;
    }
    throw Diagnostic(attr.loc, "attribute " + in_quotes(key) + " of " + n.describe() + " must be " +
                                   std::string(attr_kind_name(want)) + ", not " +
                                   std::string(attr_kind_name(got)));
  }
  for (const AttrSpec& spec : schema->attrs) {
    if (n.attrs.count(spec.name)) continue;
    if (spec.required)
      throw Diagnostic(n.loc, n.describe() + " needs the attribute " + in_quotes(spec.name) + " (" +
                                  std::string(attr_kind_name(attr_kind(spec.default_value))) + ")");
    n.attrs[spec.name] = Attr{spec.default_value, n.loc};
  }
}

// Each intermediate tensor is produced by exactly one node and inputs and weights by none;
// every tensor a node reads is defined. Returns each tensor's producer (-1 for none).
std::vector<int> check_definitions(const Graph& g) {
  std::vector<int> producer(g.tensors.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (int id : n.outputs) {
      if (id < 0) continue;
      check_tensor_id(g, id, n.describe() + " output");
      const Tensor& t = g.tensor(id);
      if (t.kind != TensorKind::Intermediate)
        throw Diagnostic(n.loc, n.describe() + " writes " + in_quotes(t.name) + ", which is a " +
                                    (t.kind == TensorKind::Input ? "graph input" : "weight") +
                                    " defined at " + where(t.loc));
      int& p = producer[static_cast<size_t>(id)];
      if (p >= 0)
        throw Diagnostic(n.loc, "tensor " + in_quotes(t.name) + " is already produced by " +
                                    g.nodes[static_cast<size_t>(p)].describe() + " at " +
                                    where(g.nodes[static_cast<size_t>(p)].loc));
      p = static_cast<int>(i);
    }
  }
  for (const Node& n : g.nodes)
    for (int id : n.inputs) {
      if (id < 0) continue;
      check_tensor_id(g, id, n.describe() + " input");
      const Tensor& t = g.tensor(id);
      if (t.kind == TensorKind::Intermediate && producer[static_cast<size_t>(id)] < 0)
        throw Diagnostic(n.loc,
                         n.describe() + " reads " + in_quotes(t.name) + ", which no node produces");
    }
  std::vector<int> listed(g.tensors.size(), 0);
  for (int id : g.outputs) {
    check_tensor_id(g, id, "graph output");
    const Tensor& t = g.tensor(id);
    if (listed[static_cast<size_t>(id)]++)
      throw Diagnostic(t.loc, "tensor " + in_quotes(t.name) + " is listed twice as a graph output");
    if (t.kind == TensorKind::Intermediate && producer[static_cast<size_t>(id)] < 0)
      throw Diagnostic(t.loc, "graph output " + in_quotes(t.name) + " is not produced by any node");
  }
  for (size_t i = 0; i < g.tensors.size(); ++i)
    if (g.tensors[i].kind == TensorKind::Intermediate && producer[i] < 0)
      throw Diagnostic(g.tensors[i].loc,
                       "tensor " + in_quotes(g.tensors[i].name) + " is not produced by any node");
  return producer;
}

// The nodes from `remaining` that lie on one cycle, in data-flow order, starting with the
// one that comes first in the file. Every remaining node reads a tensor that another
// remaining node produces, so walking back along such inputs must come round.
std::vector<int> find_cycle(const Graph& g, const std::vector<int>& producer,
                            const std::vector<bool>& remaining) {
  auto remaining_producer_of_input = [&](int node) {
    for (int id : g.nodes[static_cast<size_t>(node)].inputs) {
      if (id < 0) continue;
      const int p = producer[static_cast<size_t>(id)];
      if (p >= 0 && remaining[static_cast<size_t>(p)]) return p;
    }
    TLMC_ASSERT(false, "node " << node << " left by the sort has all its inputs ready");
    return -1;
  };
  const int start =
      static_cast<int>(std::find(remaining.begin(), remaining.end(), true) - remaining.begin());
  std::vector<int> seen_at(g.nodes.size(), -1);
  std::vector<int> path;  // walking backwards
  int cur = start;
  while (seen_at[static_cast<size_t>(cur)] < 0) {
    seen_at[static_cast<size_t>(cur)] = static_cast<int>(path.size());
    path.push_back(cur);
    cur = remaining_producer_of_input(cur);
  }
  std::vector<int> cycle(path.begin() + seen_at[static_cast<size_t>(cur)], path.end());
  std::reverse(cycle.begin(), cycle.end());  // data-flow order
  auto first = std::min_element(cycle.begin(), cycle.end());
  std::rotate(cycle.begin(), first, cycle.end());
  return cycle;
}

[[noreturn]] void report_cycle(const Graph& g, const std::vector<int>& producer,
                               const std::vector<int>& cycle) {
  // cycle[i] produces a tensor that cycle[i + 1] reads; the last feeds the first.
  std::string chain;
  const size_t k = cycle.size();
  for (size_t i = 0; i <= k; ++i) {
    const int from = cycle[i % k];
    const int to = cycle[(i + 1) % k];
    for (int id : g.nodes[static_cast<size_t>(to)].inputs)
      if (id >= 0 && producer[static_cast<size_t>(id)] == from) {
        chain += (chain.empty() ? "" : " -> ") + in_quotes(g.tensor(id).name);
        break;
      }
  }
  const Node& n = g.nodes[static_cast<size_t>(cycle[0])];
  throw Diagnostic(n.loc, n.describe() + " is on a cycle: " + chain);
}

// Kahn's algorithm; among the nodes ready at once, the one first in the file goes first.
std::vector<Node> topological_order(const Graph& g, const std::vector<int>& producer) {
  const size_t count = g.nodes.size();
  std::vector<int> waiting(count, 0);
  std::vector<std::vector<int>> readers(count);
  for (size_t i = 0; i < count; ++i)
    for (int id : g.nodes[i].inputs) {
      if (id < 0) continue;
      const int p = producer[static_cast<size_t>(id)];
      if (p < 0) continue;
      ++waiting[i];
      readers[static_cast<size_t>(p)].push_back(static_cast<int>(i));
    }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < count; ++i)
    if (waiting[i] == 0) ready.push(static_cast<int>(i));
  std::vector<Node> sorted;
  std::vector<bool> remaining(count, true);
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    remaining[static_cast<size_t>(i)] = false;
    sorted.push_back(g.nodes[static_cast<size_t>(i)]);
    for (int r : readers[static_cast<size_t>(i)])
      if (--waiting[static_cast<size_t>(r)] == 0) ready.push(r);
  }
  if (sorted.size() != count) report_cycle(g, producer, find_cycle(g, producer, remaining));
  return sorted;
}

// ONNX's Cast `to` of a float type.
int64_t onnx_float_type(DType t) {
  return t == DType::BFloat16 ? 16 : t == DType::Float16 ? 10 : 1;
}

// Node k of `g`, whose inference refused its inputs, as ONNX's float operators compute on
// float16 and bfloat16 tensors: its 16-bit inputs widened to float32 by Casts (one per
// tensor, shared through `widened`; a weight's values widened at once), its float32 results rounded
// back to the first such input's type by Casts to its own output tensors. The nodes replace node k,
// unverified (the caller infers them in turn); false, and `g` unchanged, where node k has no 16-bit
// input, mixes float types, or refuses the widened inputs too.
bool widen_half_inputs(Graph& g, size_t k, std::map<int, int>& widened, int opset) {
  Node n = g.nodes[k];
  DType half = DType::Float32;
  for (int t : n.inputs)
    if (t >= 0 && dtype_is_half(g.type(t).dtype) && half == DType::Float32) half = g.type(t).dtype;
  // Not where float inputs mix types (ONNX's operators take one): that stays an error.
  for (int t : n.inputs)
    if (t >= 0 && dtype_is_float(g.type(t).dtype) && g.type(t).dtype != half) return false;
  if (half == DType::Float32) return false;
  Graph trial = g;
  std::vector<Node> before, after;
  std::map<int, int> added;  // 16-bit tensor -> its float32 copy, new here
  for (int& t : n.inputs) {
    if (t < 0 || !dtype_is_half(trial.type(t).dtype)) continue;
    int id = -1;
    if (const auto w = widened.find(t); w != widened.end()) {
      id = w->second;
    } else if (const auto a = added.find(t); a != added.end()) {
      id = a->second;
    } else {
      const Tensor& from = trial.tensor(t);
      Tensor copy;
      copy.name = unused_tensor_name(trial, from.name + ".f32");
      copy.type = {DType::Float32, from.type.shape};
      copy.loc = from.loc;
      copy.kind = TensorKind::Intermediate;
      // A weight is widened now, so that an operator reading its values (Clip's bounds)
      // still finds them.
      const bool weight = from.kind == TensorKind::Weight && from.data;
      if (weight) {
        const std::vector<double> values = weight_values(from);
        auto bytes = std::make_shared<std::vector<uint8_t>>(4 * values.size());
        for (size_t e = 0; e < values.size(); ++e) {
          const auto f = static_cast<float>(values[e]);
          std::memcpy(bytes->data() + 4 * e, &f, 4);
        }
        copy.kind = TensorKind::Weight;
        copy.data = bytes;
      }
      trial.tensors.push_back(copy);
      id = static_cast<int>(trial.tensors.size()) - 1;
      if (!weight) before.push_back(float_cast_node(copy.name, t, id, DType::Float32, n.loc));
      added.emplace(t, id);
    }
    t = id;
  }
  std::vector<TensorType> types;
  try {
    types = find_op(n.op)->infer(trial, n);
  } catch (const Diagnostic&) {
    return false;
  }
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    if (n.outputs[i] < 0 || types[i].dtype != DType::Float32) continue;
    const int result = n.outputs[i];
    Tensor wide;
    wide.name = unused_tensor_name(trial, trial.tensor(result).name + ".f32");
    wide.type = types[i];
    wide.loc = trial.tensor(result).loc;
    wide.kind = TensorKind::Intermediate;
    trial.tensors.push_back(wide);
    n.outputs[i] = static_cast<int>(trial.tensors.size()) - 1;
    after.push_back(float_cast_node(wide.name + ".round", n.outputs[i], result, half, n.loc));
  }
  std::vector<Node> nodes = before;
  nodes.push_back(n);
  nodes.insert(nodes.end(), after.begin(), after.end());
  for (Node& c : nodes) check_node_against_schema(c, opset);
  trial.nodes.erase(trial.nodes.begin() + static_cast<long>(k));
  trial.nodes.insert(trial.nodes.begin() + static_cast<long>(k), nodes.begin(), nodes.end());
  g = std::move(trial);
  widened.insert(added.begin(), added.end());
  return true;
}

}  // namespace

std::string unused_tensor_name(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int i = 2; g.find_tensor(name) >= 0; ++i) name = base + "." + std::to_string(i);
  return name;
}

Node float_cast_node(const std::string& name, int from, int to, DType type, const SourceLoc& loc) {
  Node c;
  c.name = name;
  c.op = "Cast";
  c.inputs = {from};
  c.outputs = {to};
  c.attrs["to"] = Attr{onnx_float_type(type), loc};
  c.loc = loc;
  return c;
}

Graph verify_graph(Graph g, const NodeEvaluator& evaluate) {
  if (!is_c_identifier(g.name))
    throw Diagnostic({}, "the model name " + in_quotes(g.name) + " is not a C identifier");
  if (g.opset < kMinOpset || g.opset > kMaxOpset)
    throw Diagnostic({}, "opset " + std::to_string(g.opset) + " is not supported (only " +
                             std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset) + ")");
  check_tensors(g);
  for (Node& n : g.nodes) check_node_against_schema(n, g.opset);
  const std::vector<int> producer = check_definitions(g);
  g.nodes = topological_order(g, producer);

  // After sorting, because each node's inference reads its inputs' inferred types (and
  // the values of those computed at compile time).
  // An operator that refuses 16-bit float inputs computes on them widened to float32
  // (widen_half_inputs), as ONNX Runtime's CPU kernels do.
  std::vector<bool> computed(g.nodes.size(), false);
  std::map<int, int> widened;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const OpSchema* schema = find_op(g.nodes[k].op);
    TLMC_ASSERT(schema->infer, g.nodes[k].op << " has no shape inference");
    std::vector<TensorType> types;
    try {
      types = schema->infer(g, g.nodes[k]);
    } catch (const Diagnostic&) {
      const size_t count = g.nodes.size();
      if (!widen_half_inputs(g, k, widened, g.opset)) throw;
      computed.insert(computed.begin() + static_cast<long>(k), g.nodes.size() - count, false);
      --k;  // the inserted nodes, from the first
      continue;
    }
    const Node& n = g.nodes[k];
    TLMC_ASSERT(types.size() >= n.outputs.size(), n.describe() << " inferred " << types.size()
                                                               << " output types for "
                                                               << n.outputs.size() << " outputs");
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i] < 0) continue;
      Tensor& t = g.tensors[static_cast<size_t>(n.outputs[i])];
      check_limits(types[i].shape, n.loc, t.name);
      t.type = types[i];
    }
    if (!evaluate) continue;
    std::vector<std::vector<uint8_t>> values = evaluate(g, n);
    if (values.empty()) continue;
    TLMC_ASSERT(values.size() == n.outputs.size(), n.describe() << " evaluated to " << values.size()
                                                                << " values for "
                                                                << n.outputs.size() << " outputs");
    for (size_t i = 0; i < n.outputs.size(); ++i) {
      if (n.outputs[i] < 0) continue;
      Tensor& t = g.tensors[static_cast<size_t>(n.outputs[i])];
      TLMC_ASSERT(values[i].size() == t.type.bytes(),
                  n.describe() << " output " << t.name << " evaluated to " << values[i].size()
                               << " bytes for " << t.type.bytes());
      t.kind = TensorKind::Weight;
      t.data = std::make_shared<const std::vector<uint8_t>>(std::move(values[i]));
    }
    computed[k] = true;
  }
  std::vector<Node> kept;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (!computed[k]) kept.push_back(std::move(g.nodes[k]));
  g.nodes = std::move(kept);
  return g;
}

}  // namespace tlmc::ir
