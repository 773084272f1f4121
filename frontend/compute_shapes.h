// ir::verify_graph for a frontend's graph, computing shapes from shapes on the way: each
// Shape node, and each node of weights with only integer or bool results, becomes weights
// once its types are known, so that a Reshape's computed shape is a weight when inferred.
// A model's own products of float16 or bfloat16 operands then become tlmc's, accumulating
// in float32, and a Cast back to their type (compute_shapes.cc says how each type reads).
#pragma once

#include "ir/graph.h"

namespace tlmc::frontend {

ir::Graph verify_computing_shapes(ir::Graph g);

}  // namespace tlmc::frontend
