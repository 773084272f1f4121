#include "reference/graph_builder.h"

#include <cstring>

#include "ir/graph_verify.h"

namespace tlmc::test {

ir::AttrValue attr_int(int64_t v) { return v; }
ir::AttrValue attr_float(double v) { return v; }
ir::AttrValue attr_ints(std::vector<int64_t> v) { return v; }
ir::AttrValue attr_string(std::string v) { return v; }

namespace {
template <typename T>
std::shared_ptr<const std::vector<uint8_t>> raw_bytes(const std::vector<T>& v) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(bytes->data(), v.data(), bytes->size());
  return bytes;
}
}  // namespace

int GraphBuilder::add_tensor(const std::string& name, ir::TensorType type, ir::TensorKind kind) {
  ir::Tensor t;
  t.name = name;
  t.type = std::move(type);
  t.kind = kind;
  g_.tensors.push_back(std::move(t));
  return static_cast<int>(g_.tensors.size()) - 1;
}

int GraphBuilder::tensor_id(const std::string& name) {
  if (name.empty()) return -1;
  const int id = g_.find_tensor(name);
  if (id >= 0) return id;
  return add_tensor(name, {}, ir::TensorKind::Intermediate);
}

void GraphBuilder::input(const std::string& name, ir::Shape shape, ir::DType dtype) {
  g_.inputs.push_back(add_tensor(name, {dtype, std::move(shape)}, ir::TensorKind::Input));
}

void GraphBuilder::weight(const std::string& name, ir::Shape shape,
                          const std::vector<float>& values) {
  const int id = add_tensor(name, {ir::DType::Float32, std::move(shape)}, ir::TensorKind::Weight);
  g_.tensors[static_cast<size_t>(id)].data = raw_bytes(values);
}

void GraphBuilder::weight_i64(const std::string& name, ir::Shape shape,
                              const std::vector<int64_t>& values) {
  const int id = add_tensor(name, {ir::DType::Int64, std::move(shape)}, ir::TensorKind::Weight);
  g_.tensors[static_cast<size_t>(id)].data = raw_bytes(values);
}

void GraphBuilder::weight_i32(const std::string& name, ir::Shape shape,
                              const std::vector<int32_t>& values) {
  const int id = add_tensor(name, {ir::DType::Int32, std::move(shape)}, ir::TensorKind::Weight);
  g_.tensors[static_cast<size_t>(id)].data = raw_bytes(values);
}

void GraphBuilder::weight_bool(const std::string& name, ir::Shape shape,
                               const std::vector<uint8_t>& values) {
  const int id = add_tensor(name, {ir::DType::Bool, std::move(shape)}, ir::TensorKind::Weight);
  g_.tensors[static_cast<size_t>(id)].data = raw_bytes(values);
}

void GraphBuilder::node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs,
                        const std::map<std::string, ir::AttrValue>& attrs,
                        const std::string& name) {
  ir::Node n;
  n.op = op;
  n.name = name;
  for (const std::string& in : inputs) n.inputs.push_back(tensor_id(in));
  for (const std::string& out : outputs) n.outputs.push_back(tensor_id(out));
  for (const auto& [key, value] : attrs) n.attrs[key] = ir::Attr{value, {}};
  g_.nodes.push_back(std::move(n));
}

void GraphBuilder::output(const std::string& name) { g_.outputs.push_back(tensor_id(name)); }

ir::Graph GraphBuilder::build() const {
  ir::Graph g = g_;
  g.name = "test_graph";
  return ir::verify_graph(std::move(g));
}

std::string GraphBuilder::build_error() const {
  try {
    build();
  } catch (const Diagnostic& d) {
    return d.message();
  }
  return "";
}

reference::HostTensor float_tensor(ir::Shape shape, const std::vector<float>& values) {
  reference::HostTensor t = reference::HostTensor::zeros({ir::DType::Float32, std::move(shape)});
  if (static_cast<int64_t>(values.size()) != t.type.numel())
    throw std::invalid_argument("float_tensor: " + std::to_string(values.size()) +
                                " values for shape " + ir::shape_str(t.type.shape));
  if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

reference::HostTensor int64_tensor(ir::Shape shape, const std::vector<int64_t>& values) {
  reference::HostTensor t = reference::HostTensor::zeros({ir::DType::Int64, std::move(shape)});
  if (static_cast<int64_t>(values.size()) != t.type.numel())
    throw std::invalid_argument("int64_tensor: " + std::to_string(values.size()) +
                                " values for shape " + ir::shape_str(t.type.shape));
  if (!values.empty()) std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

std::vector<float> floats_of(const reference::HostTensor& t) {
  return std::vector<float>(t.f32(), t.f32() + t.type.numel());
}

std::vector<int64_t> int64s_of(const reference::HostTensor& t) {
  return std::vector<int64_t>(t.i64(), t.i64() + t.type.numel());
}

std::vector<double> values_of(const reference::HostTensor& t) {
  ir::Tensor w;
  w.type = t.type;
  w.data = std::make_shared<const std::vector<uint8_t>>(t.bytes);
  return ir::weight_values(w);
}

std::vector<reference::HostTensor> run_outputs(const ir::Graph& g) {
  return reference::interpret(g, {});
}

reference::HostTensor run(const ir::Graph& g, const std::vector<std::vector<float>>& inputs) {
  std::vector<reference::HostTensor> values;
  for (size_t i = 0; i < inputs.size(); ++i)
    values.push_back(float_tensor(g.type(g.inputs.at(i)).shape, inputs[i]));
  return reference::interpret(g, values).at(0);
}

ir::Shape output_shape(const GraphBuilder& b) {
  ir::Graph g = b.build();
  return g.type(g.outputs.at(0)).shape;
}

}  // namespace tlmc::test
