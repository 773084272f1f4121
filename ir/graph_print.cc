#include <sstream>

#include "ir/graph.h"

namespace tlmc::ir {
namespace {
std::string attr_text(const AttrValue& v) {
  std::ostringstream os;
  switch (attr_kind(v)) {
    case AttrKind::Int:
      os << std::get<int64_t>(v);
      break;
    case AttrKind::Float:
      os << std::get<double>(v);
      break;
    case AttrKind::String:
      os << '"' << std::get<std::string>(v) << '"';
      break;
    case AttrKind::Ints: {
      const auto& l = std::get<std::vector<int64_t>>(v);
      os << "[";
      for (size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << l[i];
      os << "]";
      break;
    }
    case AttrKind::Floats: {
      const auto& l = std::get<std::vector<double>>(v);
      os << "[";
      for (size_t i = 0; i < l.size(); ++i) os << (i ? ", " : "") << l[i];
      os << "]";
      break;
    }
  }
  return os.str();
}

std::string typed(const Graph& g, int t) {
  if (t < 0) return "_";
  const Tensor& x = g.tensor(t);
  return x.name + ": " + std::string(dtype_name(x.type.dtype)) + shape_str(x.type.shape);
}
}  // namespace

std::string graph_str(const Graph& g) {
  std::ostringstream os;
  os << "graph " << g.name << " (opset " << g.opset << ")\n";
  for (int t : g.inputs) os << "  input " << typed(g, t) << "\n";
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (g.tensors[t].kind == TensorKind::Weight)
      os << "  weight " << typed(g, static_cast<int>(t)) << "\n";
  for (const Node& n : g.nodes) {
    os << "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i) os << (i ? ", " : "") << typed(g, n.outputs[i]);
    os << " = " << n.op << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i)
      os << (i ? ", " : "") << (n.inputs[i] < 0 ? "_" : g.tensor(n.inputs[i]).name);
    os << ")";
    if (!n.attrs.empty()) {
      os << " {";
      bool first = true;
      for (const auto& [k, a] : n.attrs) {
        os << (first ? "" : ", ") << k << ": " << attr_text(a.value);
        first = false;
      }
      os << "}";
    }
    os << "\n";
  }
  os << "  outputs";
  for (int t : g.outputs) os << " " << g.tensor(t).name;
  os << "\n";
  return os.str();
}

}  // namespace tlmc::ir
