// Files of tensor sentences (a corpus's pretraining or demonstration data): the magic
// "TLMCSEN\n", a format version, the tensor language's version and vocabulary fingerprint,
// then each sentence's tokens and each decision's choices. Written whole or not at all.
#pragma once

#include <string>
#include <vector>

#include "lm/checkpoint.h"
#include "lm/tensor_sentence.h"

namespace tlmc::lm {

constexpr uint32_t kSentenceFileVersion = 1;

void write_sentences(const std::string& path, const std::vector<Sentence>& sentences);
// CheckpointError when the file is not sentences of this tensor language.
std::vector<Sentence> read_sentences(const std::string& path);

}  // namespace tlmc::lm
