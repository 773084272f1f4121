// Subgraphs for the language-model tests: every subgraph of the bundled examples, and
// products and convolutions of odd shapes.
#pragma once

#include <string>
#include <vector>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "scheduler/partition.h"

namespace tlmc::test {

inline std::vector<ir::TeProgram> programs_of(const ir::Graph& g) {
  std::vector<ir::TeProgram> out;
  for (const std::vector<int>& nodes : scheduler::partition_graph(g).subgraphs)
    out.push_back(ir::lower_subgraph(g, nodes).program);
  return out;
}

inline std::vector<ir::TeProgram> varied_programs() {
  std::vector<ir::TeProgram> out;
  for (const char* example : {"mlp", "resnet_block", "transformer_layer"}) {
    std::vector<ir::TeProgram> p = programs_of(
        frontend::read_yaml_model(std::string(TLMC_SOURCE_DIR) + "/examples/" + example + ".yaml"));
    out.insert(out.end(), p.begin(), p.end());
  }
  const char* const models[] = {
      // a product of odd sizes, and one whose axes exceed the largest tile value
      "tlmc: 1\nname: m\ninputs:\n  a: {shape: [37, 100]}\n  b: {shape: [100, 6000]}\n"
      "nodes:\n  - {op: MatMul, inputs: [a, b], outputs: [c]}\noutputs: [c]\n",
      "tlmc: 1\nname: m\ninputs:\n  a: {shape: [3, 8193]}\n"
      "nodes:\n  - {op: Softmax, inputs: [a], outputs: [c], attrs: {axis: 1}}\noutputs: [c]\n",
      // a strided convolution with padding, batch 2, and a depthwise one
      "tlmc: 1\nname: m\ninputs:\n  x: {shape: [2, 6, 15, 15]}\n"
      "weights:\n  w: {shape: [10, 6, 3, 3], init: ones}\n"
      "nodes:\n  - {op: Conv, inputs: [x, w], outputs: [y], attrs: {strides: [2, 2], pads: [1, 1, "
      "1, 1]}}\n"
      "  - {op: Relu, inputs: [y], outputs: [z]}\noutputs: [z]\n",
      "tlmc: 1\nname: m\ninputs:\n  x: {shape: [1, 12, 9, 9]}\n"
      "weights:\n  w: {shape: [12, 1, 3, 3], init: ones}\n"
      "nodes:\n  - {op: Conv, inputs: [x, w], outputs: [y], attrs: {group: 12, pads: [1, 1, 1, "
      "1]}}\n"
      "outputs: [y]\n",
  };
  for (const char* m : models) {
    std::vector<ir::TeProgram> p = programs_of(frontend::read_yaml_text(m, "model.yaml"));
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

}  // namespace tlmc::test
