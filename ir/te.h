// The tensor-expression IR: a fused subgraph as a DAG of stages, each computing one tensor
// element-wise over its spatial axes, optionally reducing over reduction axes. Loads name
// tensors by id and carry one index per dimension. Built by lower_subgraph (ir/lower.h).
#pragma once

#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/graph.h"

namespace tlmc::ir {

struct Axis {
  int var_id;  // the variable standing for this axis in the stage's body
  std::string name;
  int64_t extent;
};

enum class ReduceKind { None, Sum, Max, Min };

struct TeTensor {
  std::string name;
  DType dtype;
  Shape shape;
  int stage = -1;  // the stage computing it; -1 for a subgraph input (placeholder)
  // A placeholder whose data is known at compile time (a weight): the compiler may choose
  // its layout (scheduler/pack_constants.h).
  bool constant = false;
};

// tensor[axes] = reduce over reduce_axes of body   (body alone when reduce == None)
struct Stage {
  std::string name;
  int output;                     // tensor id
  std::vector<Axis> axes;         // one per output dimension
  std::vector<Axis> reduce_axes;  // empty when reduce == None
  ReduceKind reduce = ReduceKind::None;
  Expr body;
  std::string op;  // the operator it lowers, lower case ("conv", "matmul"): for role names
};

struct TeProgram {
  std::vector<TeTensor> tensors;
  std::vector<Stage> stages;  // topological order
  std::vector<int> inputs;    // placeholder tensor ids, in parameter order
  std::vector<int> outputs;   // tensor ids the subgraph must write, in parameter order
  int next_var = 0;           // fresh variable ids start here

  const TeTensor& tensor(int id) const { return tensors.at(static_cast<size_t>(id)); }
  const Stage& stage_of(int tensor_id) const {
    return stages.at(static_cast<size_t>(tensor(tensor_id).stage));
  }
  bool is_output(int tensor_id) const;
  // Stage ids whose bodies load `tensor_id`.
  std::vector<int> consumers(int tensor_id) const;
};

// The identity value of a reduction for a dtype (0, -inf, +inf).
Expr reduce_identity(ReduceKind k, DType t);
Expr reduce_combine(ReduceKind k, const Expr& acc, Expr value);

// The tensors a stage's body loads, each once, in order of first load: its operands, as
// Pack decisions and layout spaces number them.
std::vector<int> stage_operands(const Stage& s);

// A stage is pointwise when it has no reduction.
inline bool is_pointwise(const Stage& s) { return s.reduce == ReduceKind::None; }

// "none", "sum", "max", "min": how the program's text names a reduction.
std::string_view reduce_kind_name(ReduceKind k);

// Readable text of the whole program (--dump=te).
std::string te_str(const TeProgram& p);
// Canonical text: tensor and variable names replaced by their positions, so that two
// subgraphs computing the same thing on the same shapes print identically.
std::string te_canonical_str(const TeProgram& p);
// A stable 64-bit FNV-1a hash of te_canonical_str, printed as 16 hex digits.
std::string workload_key(const TeProgram& p);
// 16 hex digits hashing `text` (64-bit FNV-1a), as a workload key hashes its program.
std::string text_key(const std::string& text);

// Internal consistency (shapes, variable scoping, load arity); throws InternalError.
void verify_te(const TeProgram& p);

}  // namespace tlmc::ir
