#include "ir/graph.h"

#include <cstring>

namespace tlmc::ir {

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::string shape_beyond_limits(const Shape& s) {
  int64_t numel = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] < 0)
      return "its axis " + std::to_string(i) + " is negative (" + std::to_string(s[i]) + ")";
    if (s[i] > kMaxDimension)
      return "its axis " + std::to_string(i) + " is " + std::to_string(s[i]) +
             ", beyond the largest extent tlmc compiles (2^31 - 1)";
    if (s[i] != 0 && numel > kMaxElements / s[i])
      return "it has more elements than the largest tensor tlmc compiles (2^32)";
    numel *= s[i];
  }
  return "";
}

AttrKind attr_kind(const AttrValue& v) { return static_cast<AttrKind>(v.index()); }

std::string_view attr_kind_name(AttrKind k) {
  switch (k) {
    case AttrKind::Int:
      return "an integer";
    case AttrKind::Float:
      return "a number";
    case AttrKind::String:
      return "a string";
    case AttrKind::Ints:
      return "a list of integers";
    case AttrKind::Floats:
      return "a list of numbers";
  }
  return "?";
}

namespace {
template <typename T>
const T& get_attr(const Node& n, const std::string& key) {
  auto it = n.attrs.find(key);
  TLMC_ASSERT(it != n.attrs.end(), n.describe() << " has no attribute " << key);
  const T* v = std::get_if<T>(&it->second.value);
  TLMC_ASSERT(v, n.describe() << " attribute " << key << " has the wrong kind");
  return *v;
}
}  // namespace

int64_t Node::attr_int(const std::string& key) const { return get_attr<int64_t>(*this, key); }
double Node::attr_float(const std::string& key) const { return get_attr<double>(*this, key); }
const std::string& Node::attr_string(const std::string& key) const {
  return get_attr<std::string>(*this, key);
}
const std::vector<int64_t>& Node::attr_ints(const std::string& key) const {
  return get_attr<std::vector<int64_t>>(*this, key);
}
const std::vector<double>& Node::attr_floats(const std::string& key) const {
  return get_attr<std::vector<double>>(*this, key);
}

std::string Node::describe() const { return name.empty() ? op : op + " '" + name + "'"; }

int Graph::find_tensor(const std::string& n) const {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == n) return static_cast<int>(i);
  return -1;
}

std::vector<int> Graph::producers() const {
  std::vector<int> p(tensors.size(), -1);
  for (size_t n = 0; n < nodes.size(); ++n)
    for (int t : nodes[n].outputs)
      if (t >= 0) p[static_cast<size_t>(t)] = static_cast<int>(n);
  return p;
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> c(tensors.size());
  for (size_t n = 0; n < nodes.size(); ++n)
    for (int t : nodes[n].inputs)
      if (t >= 0) c[static_cast<size_t>(t)].push_back(static_cast<int>(n));
  return c;
}

bool Graph::is_output(int tensor_id) const {
  for (int o : outputs)
    if (o == tensor_id) return true;
  return false;
}

std::vector<double> weight_values(const Tensor& t) {
  TLMC_ASSERT(t.data, "tensor " << t.name << " has no data");
  const int64_t n = t.type.numel();
  std::vector<double> out(static_cast<size_t>(n));
  const uint8_t* p = t.data->data();
  for (int64_t i = 0; i < n; ++i) {
    double v = 0;
    switch (t.type.dtype) {
      case DType::Float32: {
        float f;
        std::memcpy(&f, p + 4 * i, 4);
        v = f;
        break;
      }
      case DType::Float64:
        std::memcpy(&v, p + 8 * i, 8);
        break;
      case DType::Int32: {
        int32_t x;
        std::memcpy(&x, p + 4 * i, 4);
        v = x;
        break;
      }
      case DType::Int64: {
        int64_t x;
        std::memcpy(&x, p + 8 * i, 8);
        v = static_cast<double>(x);
        break;
      }
      case DType::Int8:
        v = static_cast<int8_t>(p[i]);
        break;
      case DType::UInt8:
      case DType::Bool:
        v = p[i];
        break;
      case DType::Float16:
      case DType::BFloat16: {
        uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        v = sixteen_bit_to_float(t.type.dtype, h);
        break;
      }
    }
    out[static_cast<size_t>(i)] = v;
  }
  return out;
}

std::vector<int64_t> weight_ints(const Tensor& t) {
  std::vector<double> d = weight_values(t);
  if (t.type.dtype == DType::Int64) {  // exact, beyond 2^53
    std::vector<int64_t> out(d.size());
    // An empty tensor's data may have no storage: memcpy takes no null pointer.
    if (!out.empty()) std::memcpy(out.data(), t.data->data(), out.size() * 8);
    return out;
  }
  return std::vector<int64_t>(d.begin(), d.end());
}

std::shared_ptr<const std::vector<uint8_t>> float_bytes(const std::vector<float>& v) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(v.size() * 4);
  if (!v.empty()) std::memcpy(bytes->data(), v.data(), v.size() * 4);
  return bytes;
}

}  // namespace tlmc::ir
