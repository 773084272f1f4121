#include "scheduler/partition.h"

#include "ir/op_schema.h"

namespace tlmc::scheduler {
namespace {

ir::OpClass op_class(const ir::Node& n) { return ir::find_op(n.op)->op_class; }

// Can `consumer` join the subgraph whose last result is `t`?
bool fusible_consumer(const ir::Graph& g, const std::vector<std::vector<int>>& consumers, int t,
                      bool after_anchor, const std::vector<int>& assigned) {
  if (g.is_output(t)) return false;  // the result must be written out anyway
  const std::vector<int>& cs = consumers[static_cast<size_t>(t)];
  if (cs.size() != 1 || assigned[static_cast<size_t>(cs[0])] >= 0) return false;
  const ir::Node& c = g.nodes[static_cast<size_t>(cs[0])];
  // A node with several outputs (Split) is a subgraph of its own: the chain is followed
  // through single results only.
  if (c.outputs.size() != 1) return false;
  const ir::OpClass k = op_class(c);
  if (after_anchor) {
    // An epilogue reads the anchor's result element for element: same shape.
    return k == ir::OpClass::Elementwise && g.type(c.outputs[0]).shape == g.type(t).shape;
  }
  return k == ir::OpClass::Elementwise || k == ir::OpClass::Injective;
}

}  // namespace

Partition partition_graph(const ir::Graph& g) {
  Partition p;
  p.storage_of.resize(g.tensors.size());
  for (size_t t = 0; t < g.tensors.size(); ++t) p.storage_of[t] = static_cast<int>(t);
  const std::vector<std::vector<int>> consumers = g.consumers();
  const std::vector<int> producers = g.producers();
  std::vector<int> assigned(g.nodes.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (assigned[i] >= 0) continue;
    const ir::Node& n = g.nodes[i];
    const ir::OpClass k = op_class(n);
    // A view of contiguous data is its input's storage, unless it is a graph output: the
    // caller's output buffer must then receive a copy.
    if (k == ir::OpClass::View && !g.is_output(n.outputs[0])) {
      p.storage_of[static_cast<size_t>(n.outputs[0])] =
          p.storage_of[static_cast<size_t>(n.inputs[0])];
      assigned[i] = -2;
      continue;
    }
    std::vector<int> group = {static_cast<int>(i)};
    assigned[i] = static_cast<int>(p.subgraphs.size());
    const bool anchor = k == ir::OpClass::Anchor;
    if (k != ir::OpClass::View && n.outputs.size() == 1) {
      int t = n.outputs[0];
      while (fusible_consumer(g, consumers, t, anchor, assigned)) {
        const int c = consumers[static_cast<size_t>(t)][0];
        // Every other input of the consumer must be ready before the group runs.
        bool ready = true;
        for (int in : g.nodes[static_cast<size_t>(c)].inputs) {
          if (in < 0 || in == t) continue;
          const int prod = producers[static_cast<size_t>(in)];
          if (prod > static_cast<int>(i) && assigned[static_cast<size_t>(prod)] < 0) ready = false;
        }
        if (!ready) break;
        group.push_back(c);
        assigned[static_cast<size_t>(c)] = static_cast<int>(p.subgraphs.size());
        t = g.nodes[static_cast<size_t>(c)].outputs[0];
      }
    }
    p.subgraphs.push_back(group);
  }
  return p;
}

}  // namespace tlmc::scheduler
