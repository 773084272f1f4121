// Checks a graph a frontend has built and completes it: unknown operators and attributes,
// attribute kinds, arity, names defined once, acyclicity; fills in attribute defaults,
// orders the nodes topologically and infers every intermediate tensor's type.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tlmc::ir {

// Computes a node's outputs at compile time: their bytes, one vector per node output, or
// an empty list to leave the node in the graph. ir/ cannot evaluate operators; a frontend
// passes one (frontend/compute_shapes.h).
using NodeEvaluator =
    std::function<std::vector<std::vector<uint8_t>>(const Graph& g, const Node& n)>;

// Throws a Diagnostic at the offending node, attribute or tensor. When `evaluate` is given,
// each node is offered to it as soon as its output types are inferred; a node it computes
// leaves the graph and its outputs become weights, so that the shape inference of the nodes
// after it can read their values (a Reshape's shape computed by Shape -> Gather -> Concat).
Graph verify_graph(Graph g, const NodeEvaluator& evaluate = nullptr);

// A tensor name after `base` that `g` does not have yet: base, else base.2, base.3, ...
std::string unused_tensor_name(const Graph& g, const std::string& base);
// A Cast node `name` of tensor `from` into tensor `to`, of float type `type`.
Node float_cast_node(const std::string& name, int from, int to, DType type, const SourceLoc& loc);

}  // namespace tlmc::ir
