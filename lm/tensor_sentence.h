// Tensor sentences: a subgraph and a target written as a prompt of tokens, then a point of the
// subgraph's schedule space as decisions (the sketch's name, then per space its kind, stage
// and axis, and the value), each decision with the tokens valid where it stands.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "ir/target.h"
#include "ir/te.h"
#include "lm/vocabulary.h"
#include "scheduler/sketch.h"

namespace tlmc::lm {

// A sentence, with what a model learns from it: at a decision, the tokens it chose among.
struct Sentence {
  std::vector<Token> tokens;
  // Per token: empty where the token is given (prompt, space names, end); at a decision
  // the tokens valid there, the chosen one among them.
  std::vector<std::vector<Token>> choices;
};

// <bos>, the subgraph's stages (operator, axes and extents, the loads' index patterns),
// the hardware descriptor, then "sketch": the point's decisions follow.
std::vector<Token> prompt_tokens(const ir::TeProgram& program, const ir::Target& target);

// The tokens naming a space (its kind, stage and axis), written before its value.
std::vector<Token> space_tokens(const scheduler::Space& space);

// The tokens of the sketches' names, in order: the choices of a sentence's first decision.
std::vector<Token> sketch_tokens(const scheduler::Sketches& sketches);

// Whether a model that knows `words` can name the space: a space added to a sketch after
// the model was trained uses words it does not know.
bool names_space(const scheduler::Space& space, const KnownWords& words);

// The whole sentence of a point: the prompt, the sketch's name, each space's name and value,
// <eos>. InvalidDecision when the point is not one of the sketches' spaces. For a model that
// knows `words` (all by default), the spaces it cannot name are left out (their values
// taken without being written) and the sketches it cannot name are not among the first
// decision's choices: it reads a sentence as it is asked to write one (lm/generate.cc
// decides those spaces for it); InvalidDecision when it cannot name the point's sketch.
Sentence tensor_sentence(const std::vector<Token>& prompt, const scheduler::Sketches& sketches,
                         const scheduler::SpacePoint& point,
                         const KnownWords& words = KnownWords{});

// The point the tokens after the prompt write; nullopt when they are not a sentence of
// these sketches (an unknown sketch, a space out of order, a value not valid, no <eos>).
std::optional<scheduler::SpacePoint> parse_sentence(const scheduler::Sketches& sketches,
                                                    const std::vector<Token>& decisions);

// Readable text of tokens, separated by spaces (--dump and tests).
std::string sentence_text(const std::vector<Token>& tokens);

}  // namespace tlmc::lm
