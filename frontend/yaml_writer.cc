#include "frontend/yaml_writer.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace tlmc::frontend {
namespace {

// A YAML double-quoted string: any tensor name survives the round trip.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// A float that reads back as a float with the same value (`1.0`, not `1`).
std::string number(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string shape(const ir::Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string attr_value(const ir::AttrValue& v) {
  switch (ir::attr_kind(v)) {
    case ir::AttrKind::Int:
      return std::to_string(std::get<int64_t>(v));
    case ir::AttrKind::Float:
      return number(std::get<double>(v));
    case ir::AttrKind::String:
      return quoted(std::get<std::string>(v));
    case ir::AttrKind::Ints:
      return shape(std::get<std::vector<int64_t>>(v));
    case ir::AttrKind::Floats: {
      const auto& l = std::get<std::vector<double>>(v);
      std::string out = "[";
      for (size_t i = 0; i < l.size(); ++i) out += (i ? ", " : "") + number(l[i]);
      return out + "]";
    }
  }
  return "";
}

std::string names(const ir::Graph& g, const std::vector<int>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i)
    out += (i ? ", " : "") + (ids[i] < 0 ? "\"\"" : quoted(g.tensor(ids[i]).name));
  return out + "]";
}

}  // namespace

YamlModel write_yaml_model(const ir::Graph& g, const std::string& weights_file,
                           const std::string& header) {
  YamlModel m;
  std::ostringstream y;
  y << "# " << header << "\n";
  y << "tlmc: 1\nname: " << g.name << "\nopset: " << g.opset << "\n";
  y << (g.inputs.empty() ? "inputs: {}\n" : "inputs:\n");
  for (int t : g.inputs) {
    const ir::Tensor& x = g.tensor(t);
    y << "  " << quoted(x.name) << ": {shape: " << shape(x.type.shape)
      << ", dtype: " << ir::dtype_name(x.type.dtype) << "}\n";
  }
  bool any_weight = false;
  for (const ir::Tensor& x : g.tensors) {
    if (x.kind != ir::TensorKind::Weight) continue;
    if (!any_weight) y << "weights:\n";
    any_weight = true;
    while (m.weights.size() % 8) m.weights.push_back(0);  // 8-byte aligned offsets
    y << "  " << quoted(x.name) << ": {shape: " << shape(x.type.shape)
      << ", dtype: " << ir::dtype_name(x.type.dtype) << ", file: " << quoted(weights_file)
      << ", offset: " << m.weights.size() << "}\n";
    m.weights.insert(m.weights.end(), x.data->begin(), x.data->end());
  }
  y << (g.nodes.empty() ? "nodes: []\n" : "nodes:\n");
  for (const ir::Node& n : g.nodes) {
    y << "  - {";
    if (!n.name.empty()) y << "name: " << quoted(n.name) << ", ";
    y << "op: " << n.op << ", inputs: " << names(g, n.inputs)
      << ", outputs: " << names(g, n.outputs);
    if (!n.attrs.empty()) {
      y << ", attrs: {";
      bool first = true;
      for (const auto& [key, attr] : n.attrs) {
        y << (first ? "" : ", ") << key << ": " << attr_value(attr.value);
        first = false;
      }
      y << "}";
    }
    y << "}\n";
  }
  y << "outputs: " << names(g, g.outputs) << "\n";
  m.yaml = y.str();
  return m;
}

}  // namespace tlmc::frontend
