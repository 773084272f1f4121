// Compiles a YAML model with the real pipeline, runs the generated library in a child
// process on random inputs and compares every output with the reference interpreter.
#pragma once

#include <string>

#include "ir/graph.h"

namespace tlmc::test {

// Checks the model for the plain-C target and for the host's best SIMD target.
void expect_matches_reference(const std::string& yaml);

// The same for a verified graph compiled as it is, without folding constants: the lowering
// of what folding always computes (Shape, ConstantOfShape, Range, integer shape arithmetic)
// is generated and run too.
void expect_unfolded_matches_reference(const ir::Graph& g);

}  // namespace tlmc::test
