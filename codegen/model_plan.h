// Plans a whole model's library: the distinct kernels, the sequence of calls with each
// argument's storage (a graph input or output, the weights blob, or the workspace), the
// weights blob layout, and the workspace, sized by liveness analysis so that intermediate
// tensors whose lifetimes do not overlap share memory.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/loop.h"

namespace tlmc::codegen {

// Where a tensor lives at run time.
struct Storage {
  enum Kind { Input, Output, Weight, Workspace } kind;
  int64_t index = 0;  // Input/Output: position in the API; Weight/Workspace: byte offset
};

struct Call {
  int kernel;                  // index into ModelPlan::kernels
  std::vector<Storage> args;   // one per kernel parameter
  int64_t scratch_offset = 0;  // workspace offset of the kernel's scratch memory
  std::string comment;         // the graph nodes it computes, for readers of the C
};

struct KernelInfo {
  ir::LoopProgram loops;
  std::string workload_key;
  std::string schedule;  // the decisions, as text
  double flops = 0;      // floating-point operations of one call (for reports)
};

struct TensorInfo {
  std::string name;
  ir::TensorType type;
};

struct OutputCopy {  // a graph output that no kernel writes (an input, weight or view)
  int output;
  Storage source;
  int64_t bytes;
};

struct ModelPlan {
  std::string name;
  std::vector<TensorInfo> inputs, outputs;
  std::vector<KernelInfo> kernels;
  std::vector<Call> calls;
  std::vector<OutputCopy> copies;
  std::vector<uint8_t> weights;  // the blob, 64-byte aligned entries
  int64_t workspace_bytes = 0;
};

// One compiled subgraph: its nodes, the kernel (shared by identical subgraphs) and the
// graph tensors bound to the kernel's parameters.
struct CompiledSubgraph {
  std::vector<int> nodes;
  int kernel;
  std::vector<int> param_tensors;  // graph tensor ids: the kernel's inputs, then outputs
};

// storage_of: for each graph tensor, the tensor whose storage it shares (itself unless it
// is a view), as partitioning decided.
ModelPlan plan_model(const ir::Graph& g, const std::vector<int>& storage_of,
                     const std::vector<CompiledSubgraph>& subgraphs,
                     std::vector<KernelInfo> kernels);

}  // namespace tlmc::codegen
