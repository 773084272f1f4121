#include "reference/interpreter.h"

#include <optional>

#include "reference/kernels.h"

namespace tlmc::reference {

HostTensor HostTensor::zeros(const ir::TensorType& t) {
  return HostTensor{t, std::vector<uint8_t>(t.bytes(), 0)};
}

std::vector<HostTensor> interpret(const ir::Graph& g, const std::vector<HostTensor>& inputs) {
  TLMC_ASSERT(inputs.size() == g.inputs.size(),
              "graph " << g.name << " has " << g.inputs.size() << " inputs, got " << inputs.size());
  std::vector<std::optional<HostTensor>> values(g.tensors.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Tensor& t = g.tensor(g.inputs[i]);
    TLMC_ASSERT(inputs[i].type == t.type && inputs[i].bytes.size() == t.type.bytes(),
                "input " << t.name << " must be " << ir::dtype_name(t.type.dtype)
                         << ir::shape_str(t.type.shape) << ", got "
                         << ir::dtype_name(inputs[i].type.dtype)
                         << ir::shape_str(inputs[i].type.shape));
    values[static_cast<size_t>(g.inputs[i])] = inputs[i];
  }
  for (size_t id = 0; id < g.tensors.size(); ++id) {
    const ir::Tensor& t = g.tensors[id];
    if (t.kind != ir::TensorKind::Weight) continue;
    TLMC_ASSERT(t.data && t.data->size() == t.type.bytes(), "weight " << t.name << " has no data");
    values[id] = HostTensor{t.type, *t.data};
  }
  for (const ir::Node& n : g.nodes) {
    KernelInputs in;
    for (int id : n.inputs) {
      if (id < 0) {
        in.push_back(nullptr);
        continue;
      }
      const std::optional<HostTensor>& v = values[static_cast<size_t>(id)];
      TLMC_ASSERT(v, n.describe() << " reads " << g.tensor(id).name << " before it is computed");
      in.push_back(&*v);
    }
    std::vector<HostTensor> out = run_kernel(g, n, in);
    for (size_t i = 0; i < n.outputs.size(); ++i)
      if (n.outputs[i] >= 0) values[static_cast<size_t>(n.outputs[i])] = std::move(out[i]);
  }
  std::vector<HostTensor> outputs;
  for (int id : g.outputs) {
    const std::optional<HostTensor>& v = values[static_cast<size_t>(id)];
    TLMC_ASSERT(v, "graph output " << g.tensor(id).name << " is never computed");
    outputs.push_back(*v);
  }
  return outputs;
}

std::vector<HostTensor> evaluate_constant_node(const ir::Graph& g, const ir::Node& n) {
  std::vector<HostTensor> values;
  values.reserve(n.inputs.size());  // `in` points into it
  KernelInputs in;
  for (int id : n.inputs) {
    if (id < 0) {
      in.push_back(nullptr);
      continue;
    }
    const ir::Tensor& t = g.tensor(id);
    TLMC_ASSERT(t.data || n.op == "Shape",
                n.describe() << " is evaluated at compile time but reads " << t.name);
    values.push_back(HostTensor{t.type, t.data ? *t.data : std::vector<uint8_t>{}});
    in.push_back(&values.back());
  }
  return run_kernel(g, n, in);
}

}  // namespace tlmc::reference
