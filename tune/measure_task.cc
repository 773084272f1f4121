#include "tune/measure_task.h"

#include <cstring>
#include <map>
#include <random>

#include "ir/diagnostic.h"
#include "reference/kernels.h"
#include "reference/random_inputs.h"

namespace tlmc::tune {
double program_flops(const ir::TeProgram& p) {
  double total = 0;
  for (const ir::Stage& s : p.stages) {
    double points = 1;
    for (const ir::Axis& a : s.axes) points *= static_cast<double>(a.extent);
    for (const ir::Axis& a : s.reduce_axes) points *= static_cast<double>(a.extent);
    total += points * (ir::is_pointwise(s) ? 1 : 2);
  }
  return total;
}

MeasureTask make_measure_task(const ir::Graph& g, const std::vector<int>& nodes,
                              const ir::LoweredSubgraph& lowered, uint64_t seed) {
  MeasureTask task;
  task.workload_key = ir::workload_key(lowered.program);
  task.program = lowered.program;
  task.flops = program_flops(lowered.program);
  std::mt19937_64 rng(seed);
  std::map<int, reference::HostTensor> values;
  for (int t : lowered.input_tensors) {
    const ir::Tensor& tensor = g.tensor(t);
    reference::HostTensor h;
    if (tensor.kind == ir::TensorKind::Weight) {
      h.type = tensor.type;
      h.bytes = *tensor.data;
    } else {
      h = reference::random_tensor(tensor.type, reference::random_integer_bound(g, nodes, t), rng);
    }
    values[t] = h;
    task.inputs.push_back(std::move(h));
  }
  for (int id : nodes) {
    const ir::Node& n = g.nodes[static_cast<size_t>(id)];
    std::vector<reference::HostTensor> weights;  // inputs that are no kernel parameter
    weights.reserve(n.inputs.size());
    reference::KernelInputs in;
    for (int t : n.inputs) {
      if (t < 0) {
        in.push_back(nullptr);
        continue;
      }
      auto found = values.find(t);
      if (found != values.end()) {
        in.push_back(&found->second);
        continue;
      }
      const ir::Tensor& tensor = g.tensor(t);
      TLMC_ASSERT(tensor.kind == ir::TensorKind::Weight,
                  "subgraph input " << tensor.name << " is neither a parameter nor a weight");
      weights.push_back(reference::HostTensor{tensor.type, *tensor.data});
      in.push_back(&weights.back());
    }
    std::vector<reference::HostTensor> out = reference::run_kernel(g, n, in);
    for (size_t i = 0; i < n.outputs.size(); ++i)
      if (n.outputs[i] >= 0) values[n.outputs[i]] = std::move(out[i]);
  }
  for (int t : lowered.output_tensors) {
    auto found = values.find(t);
    TLMC_ASSERT(found != values.end(), "subgraph output " << g.tensor(t).name << " not computed");
    task.expected.push_back(found->second);
  }
  return task;
}

}  // namespace tlmc::tune
