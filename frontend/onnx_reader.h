// Reads an ONNX model (a .onnx file, initializers inline or as external data) with ONNX's
// own C++ library into a verified ir::Graph: checker first, opsets 11 to 17, every node
// rewritten to the form tlmc's operator table defines (the opset-17 semantics), symbolic
// dimensions fixed by the caller. Every unsupported operator, attribute value or dtype is
// listed in one Diagnostic.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

namespace tlmc::frontend {

struct OnnxOptions {
  // Shapes for graph inputs, by name (--input-shape NAME=1x3x224x224): they replace the
  // declared shape, which must agree on the rank and on every fixed dimension.
  std::map<std::string, ir::Shape> input_shapes;
};

ir::Graph read_onnx_model(const std::string& path, const OnnxOptions& options = {});

}  // namespace tlmc::frontend
