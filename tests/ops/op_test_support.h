// Compiles a YAML model with the real pipeline, runs the generated library in a child
// process on random inputs and compares every output with the reference interpreter.
#pragma once

#include <string>

namespace tlmc::test {

// Checks the model for the plain-C target and for the host's best SIMD target.
void expect_matches_reference(const std::string& yaml);

}  // namespace tlmc::test
