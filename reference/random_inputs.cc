#include "reference/random_inputs.h"

#include <algorithm>

namespace tlmc::reference {

int64_t random_integer_bound(const ir::Graph& g, const std::vector<int>& nodes, int t) {
  int64_t bound = 4;
  bool first = true;
  for (int id : nodes) {
    const ir::Node& n = g.nodes[static_cast<size_t>(id)];
    if (n.op != "Gather" || n.inputs.size() < 2 || n.inputs[1] != t) continue;
    int64_t axis = n.attr_int("axis");
    const ir::Shape& s = g.type(n.inputs[0]).shape;
    if (axis < 0) axis += static_cast<int64_t>(s.size());
    const int64_t extent = s.at(static_cast<size_t>(axis));
    bound = first ? extent : std::min(bound, extent);
    first = false;
  }
  return std::max<int64_t>(bound, 1);
}

}  // namespace tlmc::reference
