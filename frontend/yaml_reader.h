// Reads a YAML operator graph (spec/graph-yaml.md) into a verified ir::Graph. Every mistake
// in the file is a Diagnostic at the offending YAML node's file:line:column.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace tlmc::frontend {

// What a YAML model may hold, checked on a streaming pass over the text before any tree of
// it is built: a file that can expand into more (aliases repeat what their anchor holds,
// "billion laughs") or nest deeper (a parser's recursion) is refused at its position. A
// model needs a few levels and a node per operator, attribute and inline value; large
// weights belong in a `file`.
constexpr int64_t kMaxYamlBytes = int64_t{64} << 20;  // the text
constexpr int kMaxYamlDepth = 64;                     // nested lists and maps
constexpr int64_t kMaxYamlNodes = int64_t{1} << 21;   // each alias counted as what it repeats

ir::Graph read_yaml_model(const std::string& path);
// The same, from text; `path` is used in messages and to resolve weight files.
ir::Graph read_yaml_text(const std::string& text, const std::string& path);

}  // namespace tlmc::frontend
