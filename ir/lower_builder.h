// The builder that operator lowerings use to add stages to a tensor-expression program.
// Internal to ir/: lower.cc drives it, lower_ops*.cc call it, one function per operator.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/lower.h"
#include "ir/te.h"

namespace tlmc::ir {

class TeBuilder {
 public:
  TeBuilder(const Graph& g, TeProgram& p, const LoweringChoices& choices)
      : graph_(g), program_(p), choices_(choices) {}

  // The node being lowered, and whether it is computed channels-last.
  void set_node(int node_id) { node_ = node_id; }
  bool channels_last() const { return choices_.channels_last_convs.count(node_) != 0; }

  const Graph& graph() const { return graph_; }
  // The TE tensor holding graph tensor `id`: a stage output already built, or a new input.
  int tensor(int graph_tensor_id);
  const TeTensor& te(int te_id) const { return program_.tensor(te_id); }
  // Records that graph tensor `graph_id` is computed by TE tensor `te_id`.
  void bind(int graph_id, int te_id) { bound_[graph_id] = te_id; }
  bool is_bound(int graph_id) const { return bound_.count(graph_id) != 0; }

  // Fresh axes over a shape ("i0", "i1", ...) and a fresh reduction axis.
  std::vector<Axis> axes(const Shape& shape, const std::string& prefix = "i");
  // Fresh axes named by their role in the operator ("n", "oc", "oh", "ow"): the names the
  // schedule's spaces use, so that one name means the same thing across workloads.
  std::vector<Axis> named_axes(const Shape& shape, const std::vector<std::string>& names);
  Axis reduce_axis(const std::string& name, int64_t extent);
  static std::vector<Expr> vars(const std::vector<Axis>& axes);

  // Adds a stage computing a new tensor; returns the tensor id.
  int stage(const std::string& name, DType t, const std::vector<Axis>& axes, Expr body,
            ReduceKind reduce = ReduceKind::None, const std::vector<Axis>& reduce_axes = {});

  Expr load(int te_id, std::vector<Expr> indices) const;
  // A load read as float32: a float16 or bfloat16 element (a product's operand) widened.
  Expr load_f32(int te_id, std::vector<Expr> indices) const;
  // A load of te_id broadcast (numpy rules, aligned right) to an output indexed by `out`.
  Expr broadcast_load(int te_id, const std::vector<Expr>& out) const;

 private:
  const Graph& graph_;
  TeProgram& program_;
  std::map<int, int> bound_;
  const LoweringChoices& choices_;
  int node_ = -1;
};

// A constant of dtype t (0 or 1 for bool): a float immediate or a cast integer one.
Expr typed_constant(double v, DType t);

// One lowering per operator; registered by name in lower_ops.cc.
using LowerFn = void (*)(const Node& n, TeBuilder& b);
LowerFn find_lowering(const std::string& op);

}  // namespace tlmc::ir
