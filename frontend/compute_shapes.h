// ir::verify_graph for a frontend's graph, computing shapes from shapes on the way: each
// Shape node, and each node of weights with only integer or bool results, becomes weights
// once its types are known, so that a Reshape's computed shape is a weight when inferred.
#pragma once

#include "ir/graph.h"

namespace tlmc::frontend {

ir::Graph verify_computing_shapes(ir::Graph g);

}  // namespace tlmc::frontend
