// Compiles a YAML model with the real pipeline, runs the generated library in a child
// process on random inputs and compares every output with the reference interpreter.
#pragma once

#include <string>

#include "frontend/reduced_precision.h"
#include "ir/graph.h"

namespace tlmc::test {

// Checks the model for the plain-C target and for the host's best SIMD target.
void expect_matches_reference(const std::string& yaml);

// The model compiled with --precision bf16 for the plain-C and host targets, each told it
// has bf16 products (so the arithmetic is checked wherever this runs): the library computes
// the bfloat16 model exactly, and the float32 model within bfloat16's tolerance; `storage`
// as --bf16-storage says.
void expect_bf16_matches_reference(
    const std::string& yaml,
    frontend::PrecisionOptions::Storage storage = frontend::PrecisionOptions::Storage::Products);

// The same for a verified graph compiled as it is, without folding constants: the lowering
// of what folding always computes (Shape, ConstantOfShape, Range, integer shape arithmetic)
// is generated and run too.
void expect_unfolded_matches_reference(const ir::Graph& g);

}  // namespace tlmc::test
