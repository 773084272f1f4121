// Splits a verified graph into fused subgraphs: an anchor (a matrix product, convolution,
// pooling, reduction, Softmax, LayerNormalization) with the chain of element-wise consumers
// after it; element-wise and injective chains on their own; views (Reshape, Squeeze, ...)
// sharing their input's storage; a node with several outputs (Split) alone. With
// `fuse_conversions`, a Transpose read by a dense convolution alone (the conversion into an
// activation layout) joins that reader: it is computed in the reader's loads (or in the pass
// that pads its input), not as a kernel of its own.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace tlmc::scheduler {

struct Partition {
  std::vector<std::vector<int>> subgraphs;  // node ids, in topological order
  // For each tensor, the tensor whose storage it is (itself unless it is a view).
  std::vector<int> storage_of;
};

Partition partition_graph(const ir::Graph& g, bool fuse_conversions = false);

}  // namespace tlmc::scheduler
