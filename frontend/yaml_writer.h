// Writes a graph as a YAML model (spec/graph-yaml.md) that reads back to the same graph:
// every tensor, attribute (defaults included) and node, with the weights' bytes in one
// binary file the YAML names. Used by `tlmc import`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace tlmc::frontend {

struct YamlModel {
  std::string yaml;
  std::vector<uint8_t> weights;  // the contents of the file named `weights_file`
};

// `weights_file` is written into the YAML as given (a path relative to the YAML file);
// `header` is a comment placed first.
YamlModel write_yaml_model(const ir::Graph& g, const std::string& weights_file,
                           const std::string& header);

}  // namespace tlmc::frontend
