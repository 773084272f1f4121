// The operator table: for each supported ONNX operator, its arity, its attributes with
// their ONNX defaults, its class for partitioning and its shape inference (ir/op_schema*.cc).
// Lowering (ir/lower_ops.cc) and the reference interpreter (reference/) have a function for
// every entry, as tests/reference/operator_table_follows_onnx.cc checks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tlmc::ir {

// How an operator takes part in partitioning (scheduler/partition.h).
enum class OpClass {
  Anchor,       // a reduction or a matrix product: starts a fused subgraph
  Elementwise,  // pointwise with numpy broadcasting: fuses after an anchor or with its kind
  Injective,    // each output element reads a few input elements (Transpose, Concat, Gather)
  View,         // no data movement on contiguous data (Reshape, Flatten, Identity)
};

struct AttrSpec {
  std::string name;
  AttrValue default_value;  // also fixes the attribute's kind
  bool required = false;    // no default: the model must give it
  // Integer values beyond the axis range mean the same as its end (Shape's start and end),
  // so any int64 is valid; every other integer attribute is within kMaxAttributeMagnitude.
  bool clamped = false;
};

struct OpSchema {
  std::string name;
  int min_inputs = 1;
  int max_inputs = 1;
  int min_outputs = 1;
  int max_outputs = 1;
  OpClass op_class = OpClass::Elementwise;
  std::vector<AttrSpec> attrs;
  // Output types from the node's (complete) attributes and its input types; may read the
  // data of weight inputs (Reshape's shape). Throws a Diagnostic at the node on a shape or
  // dtype that does not fit. Optional inputs that are absent have id -1.
  std::vector<TensorType> (*infer)(const Graph& g, const Node& n) = nullptr;
  int since_opset = 1;  // the first opset defining the operator with these semantics
};

// nullptr when tlmc does not support the operator.
const OpSchema* find_op(const std::string& name);
// Every supported operator, sorted by name.
std::vector<const OpSchema*> all_ops();
// "Add, AveragePool, ..." for messages.
std::string supported_op_list();

// The newest opset whose semantics tlmc implements, and the oldest it accepts.
constexpr int kMaxOpset = 17;
constexpr int kMinOpset = 13;

}  // namespace tlmc::ir
