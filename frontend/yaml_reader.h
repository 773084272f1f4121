// Reads a YAML operator graph (spec/graph-yaml.md) into a verified ir::Graph. Every mistake
// in the file is a Diagnostic at the offending YAML node's file:line:column.
#pragma once

#include <string>

#include "ir/graph.h"

namespace tlmc::frontend {

ir::Graph read_yaml_model(const std::string& path);
// The same, from text; `path` is used in messages and to resolve weight files.
ir::Graph read_yaml_text(const std::string& text, const std::string& path);

}  // namespace tlmc::frontend
