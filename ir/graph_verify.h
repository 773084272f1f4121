// Checks a graph a frontend has built and completes it: unknown operators and attributes,
// attribute kinds, arity, names defined once, acyclicity; fills in attribute defaults,
// orders the nodes topologically and infers every intermediate tensor's type.
#pragma once

#include "ir/graph.h"

namespace tlmc::ir {

// Throws a Diagnostic at the offending node, attribute or tensor.
Graph verify_graph(Graph g);

}  // namespace tlmc::ir
