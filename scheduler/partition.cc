#include "scheduler/partition.h"

#include "ir/op_schema.h"

namespace tlmc::scheduler {
namespace {

ir::OpClass op_class(const ir::Node& n) { return ir::find_op(n.op)->op_class; }

// The tensors of `group` that must be stored: read by a node outside it, or graph outputs.
std::vector<int> open_tensors(const ir::Graph& g, const std::vector<std::vector<int>>& consumers,
                              const std::vector<int>& group, const std::vector<int>& assigned,
                              int id) {
  std::vector<int> open;
  for (int node : group)
    for (int t : g.nodes[static_cast<size_t>(node)].outputs) {
      bool leaves = g.is_output(t);
      for (int c : consumers[static_cast<size_t>(t)])
        leaves = leaves || assigned[static_cast<size_t>(c)] != id;
      if (leaves) open.push_back(t);
    }
  return open;
}

// Is node `c` a dense convolution whose input is `t`, the only reader of `t`, a Transpose's
// result: a conversion into the layout it reads, which may join it (fuse_conversions)? A dense
// convolution vectorised over its output channels reads its input one broadcast element at a
// time, so where that element lies changes only its address. A depthwise convolution or a
// pool loads vectors along the channels, which a conversion turns into gathers: at -O0 on a
// 2-core Zen 4, MobileNetV2 in blocked channels ran 4.66 and 5.00 ms with its conversions into
// depthwise convolutions fused against 4.21 apart, where ResNet-50's first convolution with
// the input's conversion fused took 1132 us against 1159 + 38 apart.
bool reads_a_conversion(const ir::Graph& g, const std::vector<std::vector<int>>& consumers, int t,
                        int c) {
  const ir::Node& n = g.nodes[static_cast<size_t>(c)];
  return n.op == "Conv" && n.attr_int("group") == 1 && n.outputs.size() == 1 && !n.inputs.empty() &&
         n.inputs[0] == t && consumers[static_cast<size_t>(t)].size() == 1 && !g.is_output(t);
}

// Can node `c`, which reads a result of the group, join it? It must have one output and be
// element-wise after an anchor (reading the anchor's result element for element: the same
// shape), element-wise or injective otherwise; and every other input must be ready before
// the group runs: computed inside it, or by a node before the group's first.
bool fusible(const ir::Graph& g, const std::vector<int>& producers,
             const std::vector<int>& assigned, int c, int first, int id, bool after_anchor,
             const ir::Shape& anchor_shape) {
  if (assigned[static_cast<size_t>(c)] >= 0 || assigned[static_cast<size_t>(c)] == -2) return false;
  const ir::Node& n = g.nodes[static_cast<size_t>(c)];
  if (n.outputs.size() != 1) return false;
  const ir::OpClass k = op_class(n);
  if (after_anchor && (k != ir::OpClass::Elementwise || g.type(n.outputs[0]).shape != anchor_shape))
    return false;
  if (!after_anchor && k != ir::OpClass::Elementwise && k != ir::OpClass::Injective) return false;
  for (int in : n.inputs) {
    if (in < 0) continue;
    const int prod = producers[static_cast<size_t>(in)];
    if (prod < 0 || assigned[static_cast<size_t>(prod)] == id) continue;
    if (prod > first && assigned[static_cast<size_t>(prod)] < 0) return false;
  }
  return true;
}

// An epilogue may hold nodes whose results other nodes of it read several times (GELU's
// z feeds z / sqrt(2) and z * (1 + erf(...)); SiLU's x feeds x * sigmoid(x)): the group is
// grown node by node, in order, and kept as it was at the last point where one tensor
// alone leaves it. Growth stops this many nodes past that point.
constexpr size_t kMaxOpenNodes = 8;
// The most operations one epilogue value may expand to once its stages are inlined (the
// erf-form GELU: 12).
constexpr int64_t kMaxInlinedSize = 64;

}  // namespace

Partition partition_graph(const ir::Graph& g, bool fuse_conversions) {
  Partition p;
  p.storage_of.resize(g.tensors.size());
  for (size_t t = 0; t < g.tensors.size(); ++t) p.storage_of[t] = static_cast<int>(t);
  const std::vector<std::vector<int>> consumers = g.consumers();
  const std::vector<int> producers = g.producers();
  std::vector<int> assigned(g.nodes.size(), -1);
  std::vector<int64_t> inlined_size(g.nodes.size(), 1);  // nodes of the expression each computes
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (assigned[i] != -1) continue;
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
    const int id = static_cast<int>(p.subgraphs.size());
    std::vector<int> group = {static_cast<int>(i)};
    assigned[i] = id;
    bool anchor = k == ir::OpClass::Anchor;
    if (k != ir::OpClass::View && n.outputs.size() == 1) {
      ir::Shape anchor_shape = g.type(n.outputs[0]).shape;
      size_t kept = 1;
      // A conversion and the convolution or pool reading it: the reader is the anchor.
      if (fuse_conversions && n.op == "Transpose") {
        const std::vector<int>& readers = consumers[static_cast<size_t>(n.outputs[0])];
        const int reader = readers.empty() ? -1 : readers[0];
        if (reader >= 0 && reads_a_conversion(g, consumers, n.outputs[0], reader) &&
            assigned[static_cast<size_t>(reader)] == -1) {
          bool ready = true;  // its other inputs computed before the conversion
          for (size_t in = 1; in < g.nodes[static_cast<size_t>(reader)].inputs.size(); ++in) {
            const int t = g.nodes[static_cast<size_t>(reader)].inputs[in];
            const int prod = t < 0 ? -1 : producers[static_cast<size_t>(t)];
            ready = ready && prod < static_cast<int>(i);  // (-1: a weight or graph input)
          }
          if (ready) {
            group.push_back(reader);
            assigned[static_cast<size_t>(reader)] = id;
            anchor = true;
            anchor_shape = g.type(g.nodes[static_cast<size_t>(reader)].outputs[0]).shape;
            kept = group.size();
          }
        }
      }
      while (group.size() - kept < kMaxOpenNodes) {
        // The first node, in order, that reads a result of the group and may join it.
        int next = -1;
        for (int member : group)
          for (int t : g.nodes[static_cast<size_t>(member)].outputs)
            for (int c : consumers[static_cast<size_t>(t)])
              if ((next < 0 || c < next) &&
                  fusible(g, producers, assigned, c, static_cast<int>(i), id, anchor, anchor_shape))
                next = c;
        if (next < 0) break;
        // A graph output is written out anyway: nothing after it joins.
        const std::vector<int> open_before = open_tensors(g, consumers, group, assigned, id);
        if (open_before.size() == 1 && g.is_output(open_before[0])) break;
        // Element-wise stages are inlined into their readers: a value read twice is
        // computed twice. A tail whose expression would grow past a bound stays apart (a
        // chain of x + x doubles at every node).
        int64_t size = 1;
        for (int in : g.nodes[static_cast<size_t>(next)].inputs) {
          const int prod = in < 0 ? -1 : producers[static_cast<size_t>(in)];
          size += prod >= 0 && assigned[static_cast<size_t>(prod)] == id
                      ? inlined_size[static_cast<size_t>(prod)]
                      : 1;
        }
        if (size > kMaxInlinedSize) break;
        inlined_size[static_cast<size_t>(next)] = size;
        group.push_back(next);
        assigned[static_cast<size_t>(next)] = id;
        if (open_tensors(g, consumers, group, assigned, id).size() == 1) kept = group.size();
      }
      for (size_t j = kept; j < group.size(); ++j) assigned[static_cast<size_t>(group[j])] = -1;
      group.resize(kept);
    }
    p.subgraphs.push_back(group);
  }
  return p;
}

}  // namespace tlmc::scheduler
