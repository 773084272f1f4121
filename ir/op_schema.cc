#include "ir/op_schema.h"

#include <algorithm>
#include <map>

#include "ir/op_schema_parts.h"

namespace tlmc::ir {
namespace {

using Registry = std::map<std::string, OpSchema>;

const Registry& registry() {
  static const Registry table = [] {
    Registry r;
    for (auto part : {nn_op_schemas, elementwise_op_schemas, tensor_op_schemas})
      for (OpSchema& s : part()) {
        TLMC_ASSERT(s.infer, "operator " << s.name << " has no shape inference");
        std::string name = s.name;
        TLMC_ASSERT(r.emplace(name, std::move(s)).second,
                    "operator " << name << " is defined twice");
      }
    return r;
  }();
  return table;
}

}  // namespace

const OpSchema* find_op(const std::string& name) {
  const Registry& r = registry();
  auto it = r.find(name);
  return it == r.end() ? nullptr : &it->second;
}

std::vector<const OpSchema*> all_ops() {
  std::vector<const OpSchema*> out;
  for (const auto& [name, schema] : registry()) out.push_back(&schema);
  return out;  // std::map keeps them sorted by name
}

std::string supported_op_list() {
  std::string out;
  for (const OpSchema* s : all_ops()) out += (out.empty() ? "" : ", ") + s->name;
  return out;
}

void fail_node(const Node& n, const std::string& message) {
  throw Diagnostic(n.loc, n.describe() + " " + message);
}

bool has_input(const Node& n, size_t i) { return i < n.inputs.size() && n.inputs[i] >= 0; }

const TensorType& input_type(const Graph& g, const Node& n, size_t i) {
  TLMC_ASSERT(has_input(n, i), n.describe() << " has no input " << i);
  return g.type(n.inputs[i]);
}

void require_float32_input(const Graph& g, const Node& n, size_t i) {
  DType t = input_type(g, n, i).dtype;
  if (t != DType::Float32)
    fail_node(
        n, "does not support input dtype " + std::string(dtype_name(t)) + " (supported: float32)");
}

const std::vector<DType> kNumericDTypes = {DType::Float32, DType::Int32, DType::Int64};

void require_input_dtype(const Graph& g, const Node& n, size_t i,
                         const std::vector<DType>& allowed) {
  const DType t = input_type(g, n, i).dtype;
  if (std::find(allowed.begin(), allowed.end(), t) != allowed.end()) return;
  std::string names;
  for (DType a : allowed) names += (names.empty() ? "" : ", ") + std::string(dtype_name(a));
  fail_node(n, "does not support input dtype " + std::string(dtype_name(t)) +
                   " (supported: " + names + ")");
}

void require_same_dtypes(const Graph& g, const Node& n, size_t first) {
  const DType want = input_type(g, n, first).dtype;
  for (size_t i = first + 1; i < n.inputs.size(); ++i) {
    if (!has_input(n, i)) continue;
    const DType t = input_type(g, n, i).dtype;
    if (t != want)
      fail_node(n, "input " + std::to_string(i) + " has dtype " + std::string(dtype_name(t)) +
                       " but input " + std::to_string(first) + " has dtype " +
                       std::string(dtype_name(want)));
  }
}

DType product_output_dtype(const Graph& g, const Node& n) {
  const int64_t float32_output = n.attr_int("float32_output");
  if (float32_output != 0 && float32_output != 1)
    fail_node(n, "has float32_output " + std::to_string(float32_output) + " (expected 0 or 1)");
  const DType t = input_type(g, n, 0).dtype;
  if (!dtype_is_half(t) || input_type(g, n, 1).dtype != t) {
    require_float32_inputs(g, n);
    return DType::Float32;
  }
  if (float32_output == 0) {
    require_same_dtypes(g, n);
    return t;
  }
  for (size_t i = 2; i < n.inputs.size(); ++i)
    if (has_input(n, i)) require_float32_input(g, n, i);
  return DType::Float32;
}

void require_float32_inputs(const Graph& g, const Node& n) {
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (has_input(n, i)) require_float32_input(g, n, i);
}

std::vector<TensorType> only_first_output(const Graph& g, const Node& n, const TensorType& first) {
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i] >= 0)
      fail_node(n, "requests output " + std::to_string(i) + " '" + g.tensor(n.outputs[i]).name +
                       "'; tlmc supports only the first output of " + n.op);
  return std::vector<TensorType>(std::max<size_t>(1, n.outputs.size()), first);
}

}  // namespace tlmc::ir
