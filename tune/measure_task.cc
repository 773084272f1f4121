#include "tune/measure_task.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <random>

#include "ir/diagnostic.h"
#include "ir/shape_rules.h"
#include "reference/kernels.h"
#include "reference/random_inputs.h"

namespace tlmc::tune {
namespace {

std::string joined(const std::vector<int64_t>& v, const char* by) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? by : "") + std::to_string(v[i]);
  return out;
}

// "MatMul 128x768x3072 (x12)", "Gemm 1x2048x1000", "Conv 3x3/2 64->128 28x28", or the op.
std::string describe_node(const ir::Graph& g, const ir::Node& n) {
  const ir::Shape& out = g.type(n.outputs[0]).shape;
  if ((n.op == "MatMul" || n.op == "Gemm") && out.size() >= 2) {
    const ir::Shape& a = g.type(n.inputs[0]).shape;
    const bool trans_a = n.op == "Gemm" && n.attr_int("transA") != 0;
    const int64_t k = a.size() == 1 ? a[0] : trans_a ? a[a.size() - 2] : a.back();
    int64_t batch = 1;
    for (size_t d = 0; d + 2 < out.size(); ++d) batch *= out[d];
    return n.op + " " + joined({out[out.size() - 2], k, out.back()}, "x") +
           (batch > 1 ? " (x" + std::to_string(batch) + ")" : "");
  }
  if (n.op == "Conv" && n.inputs.size() >= 2) {
    const ir::Shape& w = g.type(n.inputs[1]).shape;  // [M, C / group, k...]
    const int64_t group = n.attr_int("group");
    const std::vector<int64_t> kernel(w.begin() + 2, w.end());
    const std::vector<int64_t>& strides = n.attr_ints("strides");
    const bool strided =
        std::any_of(strides.begin(), strides.end(), [](int64_t s) { return s != 1; });
    const ir::ChannelLayout layout = ir::channel_layout(n);
    const size_t first = ir::first_spatial_axis(layout);
    const std::vector<int64_t> at(
        out.begin() + static_cast<std::ptrdiff_t>(first),
        out.begin() + static_cast<std::ptrdiff_t>(first + ir::spatial_rank(out.size(), layout)));
    return "Conv " + joined(kernel, "x") + (strided ? "/" + joined(strides, "x") : "") + " " +
           std::to_string(w[1] * group) + "->" + std::to_string(w[0]) +
           (group > 1 ? " g" + std::to_string(group) : "") + " " + joined(at, "x");
  }
  return n.op;
}

}  // namespace

std::string describe_nodes(const ir::Graph& g, const std::vector<int>& nodes) {
  std::vector<std::string> products, others;
  for (int id : nodes) {
    const ir::Node& n = g.nodes[static_cast<size_t>(id)];
    if (n.op == "Cast") continue;
    const std::string d = describe_node(g, n);
    std::vector<std::string>& into = d == n.op ? others : products;
    if (std::find(into.begin(), into.end(), d) == into.end()) into.push_back(d);
  }
  std::string out;
  for (const std::vector<std::string>* part : {&products, &others})
    for (const std::string& d : *part) out += (out.empty() ? "" : " + ") + d;
  return out;
}

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
  task.description = describe_nodes(g, nodes);
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
