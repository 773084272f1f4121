// Model files: the magic "TLMCGPT\n", the file format's version, the tensor language's version
// and vocabulary fingerprint, the configuration (from format 2 with whether the model speaks
// CUDA targets' sentences or CPU ones'; format 1 files still read), from format 3 the digest
// of the model's lineage (lm/lineage.h; empty where it has none), the parameters, and
// optionally the optimiser's state (to resume training). Written whole or not at all.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "lm/gpt.h"
#include "lm/train.h"

namespace tlmc::lm {

constexpr uint32_t kCheckpointVersion = 3;

// A model file that cannot be used: missing, truncated, of another format, language or
// vocabulary. The message names the file and what to do.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes `path` (through a temporary file renamed over it); the optimiser's state when given,
// and the digest of the model's lineage (16 hex digits, or "" for none).
void save_checkpoint(const std::string& path, const Gpt& model,
                     const AdamWState* optimiser = nullptr, const std::string& lineage = "");

struct Checkpoint {
  Gpt model;
  std::optional<AdamWState> optimiser;  // when the file has it
  std::string lineage;                  // its lineage's digest; "" for none (formats 1 and 2)
};
// Reads `path`; CheckpointError when it is not a model of this tlmc's tensor language.
Checkpoint load_checkpoint(const std::string& path);
// The same from a file's bytes in memory (the bundled model); `name` stands for the path.
Checkpoint load_checkpoint_bytes(const std::string& name, std::string bytes);

}  // namespace tlmc::lm
