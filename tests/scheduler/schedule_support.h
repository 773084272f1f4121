// Builds the tensor-expression program of a one-subgraph YAML model, for scheduler tests.
#pragma once

#include <string>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "scheduler/decision.h"
#include "scheduler/partition.h"

namespace tlmc::test {

inline ir::TeProgram program_of(const std::string& yaml) {
  ir::Graph g = frontend::read_yaml_text(yaml, "model.yaml");
  scheduler::Partition p = scheduler::partition_graph(g);
  return ir::lower_subgraph(g, p.subgraphs.at(0)).program;
}

// C = A x B with A [m, k] and B [k, n]: one reduction stage.
inline std::string matmul_yaml(int m, int k, int n) {
  return "tlmc: 1\nname: mm\ninputs:\n  a: {shape: [" + std::to_string(m) + ", " +
         std::to_string(k) + "]}\n  b: {shape: [" + std::to_string(k) + ", " + std::to_string(n) +
         "]}\nnodes:\n  - {op: MatMul, inputs: [a, b], outputs: [c]}\noutputs: [c]\n";
}

// Applies `d`; the InvalidDecision's message, or "" when it applied.
inline std::string error_of(scheduler::ScheduleState& st, const scheduler::Decision& d) {
  try {
    scheduler::apply_decision(st, d);
  } catch (const scheduler::InvalidDecision& e) {
    return e.what();
  }
  return "";
}

}  // namespace tlmc::test
