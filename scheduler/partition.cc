#include "scheduler/partition.h"

#include <algorithm>

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

// A widening: a Cast to float32 of a 16-bit float tensor (a bfloat16 activation that a
// residual sum reads: --bf16-storage shared; a bfloat16 model's tensors, which every
// operator but the products reads widened). It joins the group of the node that reads it,
// computed in that node's loads, rather than a kernel of its own writing float32.
bool is_widening(const ir::Graph& g, const ir::Node& n) {
  return n.op == "Cast" && n.inputs.size() == 1 && n.outputs.size() == 1 && n.inputs[0] >= 0 &&
         n.outputs[0] >= 0 && g.type(n.outputs[0]).dtype == ir::DType::Float32 &&
         ir::dtype_is_half(g.type(n.inputs[0]).dtype) && !g.is_output(n.outputs[0]);
}

// Is node `p` a widening in no group yet, of a tensor computed before the group's first node
// (or a graph input) or inside the group?
bool is_ready_widening(const ir::Graph& g, const std::vector<int>& producers,
                       const std::vector<int>& assigned, int p, int first, int id) {
  if (assigned[static_cast<size_t>(p)] != -1 || !is_widening(g, g.nodes[static_cast<size_t>(p)]))
    return false;
  const int q = producers[static_cast<size_t>(g.nodes[static_cast<size_t>(p)].inputs[0])];
  return q < first || assigned[static_cast<size_t>(q)] == id;  // (-1: a graph input)
}

// A widening read by one element-wise or injective node alone waits for that node's group
// (which takes it in: fusible, or the group's start), instead of starting a kernel itself.
bool waits_for_its_reader(const ir::Graph& g, const std::vector<std::vector<int>>& consumers,
                          const ir::Node& n) {
  if (!is_widening(g, n)) return false;
  const std::vector<int>& readers = consumers[static_cast<size_t>(n.outputs[0])];
  if (readers.size() != 1) return false;
  const ir::OpClass k = op_class(g.nodes[static_cast<size_t>(readers[0])]);
  return k == ir::OpClass::Elementwise || k == ir::OpClass::Injective;
}

// Can node `c`, which reads a result of the group, join it? It must have one output and be
// element-wise after an anchor (reading the anchor's result element for element: the same
// shape), element-wise or injective otherwise; and every other input must be ready before
// the group runs: computed inside it, or by a node before the group's first, or by a
// widening of such a tensor (is_ready_widening), which joins with it (`widenings`).
bool fusible(const ir::Graph& g, const std::vector<std::vector<int>>& consumers,
             const std::vector<int>& producers, const std::vector<int>& assigned, int c, int first,
             int id, bool after_anchor, const ir::Shape& anchor_shape,
             std::vector<int>* widenings) {
  widenings->clear();
  if (assigned[static_cast<size_t>(c)] >= 0 || assigned[static_cast<size_t>(c)] == -2) return false;
  const ir::Node& n = g.nodes[static_cast<size_t>(c)];
  if (n.outputs.size() != 1 || waits_for_its_reader(g, consumers, n)) return false;
  const ir::OpClass k = op_class(n);
  if (after_anchor && (k != ir::OpClass::Elementwise || g.type(n.outputs[0]).shape != anchor_shape))
    return false;
  if (!after_anchor && k != ir::OpClass::Elementwise && k != ir::OpClass::Injective) return false;
  for (int in : n.inputs) {
    if (in < 0) continue;
    const int prod = producers[static_cast<size_t>(in)];
    if (prod < 0 || assigned[static_cast<size_t>(prod)] == id) continue;
    // Unassigned: after the group's first node, or a widening that waits for its reader.
    if (assigned[static_cast<size_t>(prod)] == -1) {
      if (!is_ready_widening(g, producers, assigned, prod, first, id)) return false;
      widenings->push_back(prod);
    }
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
    if (waits_for_its_reader(g, consumers, n)) continue;
    const int id = static_cast<int>(p.subgraphs.size());
    std::vector<int> group = {static_cast<int>(i)};
    assigned[i] = id;
    for (int in : n.inputs) {  // widenings that waited for this node
      const int prod = in < 0 ? -1 : producers[static_cast<size_t>(in)];
      if (prod >= 0 && assigned[static_cast<size_t>(prod)] == -1 &&
          waits_for_its_reader(g, consumers, g.nodes[static_cast<size_t>(prod)])) {
        group.push_back(prod);
        assigned[static_cast<size_t>(prod)] = id;
      }
    }
    bool anchor = k == ir::OpClass::Anchor;
    if (k != ir::OpClass::View && n.outputs.size() == 1) {
      ir::Shape anchor_shape = g.type(n.outputs[0]).shape;
      size_t kept = group.size();
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
        std::vector<int> widenings, next_widenings;  // (fusible's)
        for (int member : group)
          for (int t : g.nodes[static_cast<size_t>(member)].outputs)
            for (int c : consumers[static_cast<size_t>(t)])
              if ((next < 0 || c < next) &&
                  fusible(g, consumers, producers, assigned, c, static_cast<int>(i), id, anchor,
                          anchor_shape, &widenings)) {
                next = c;
                next_widenings = widenings;
              }
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
        for (int w : next_widenings) {
          group.push_back(w);
          assigned[static_cast<size_t>(w)] = id;
        }
        group.push_back(next);
        assigned[static_cast<size_t>(next)] = id;
        if (open_tensors(g, consumers, group, assigned, id).size() == 1) kept = group.size();
      }
      for (size_t j = kept; j < group.size(); ++j) assigned[static_cast<size_t>(group[j])] = -1;
      group.resize(kept);
    }
    std::sort(group.begin(), group.end());  // widenings join before their readers
    p.subgraphs.push_back(group);
  }
  return p;
}

}  // namespace tlmc::scheduler
