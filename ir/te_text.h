// A tensor-expression program as text that reads back to the same program (names, stage
// roles, variable ids and all): how the tuning database and the language model's corpus
// keep the subgraphs they learn from. Versioned; text of another version is refused.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "ir/te.h"

namespace tlmc::ir {

// Raised for text that is not a program of this version, with what was wrong and where.
class TeTextError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string te_to_text(const TeProgram& p);
// Throws TeTextError; the program it returns passes verify_te.
TeProgram te_from_text(std::string_view text);

}  // namespace tlmc::ir
