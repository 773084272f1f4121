// `tlmc lm verifier`: trains the speedup model that checks -O1's drafts (tune/speedup_model.h)
// on measured tuning records, each workload's records paired with its -O0 record; chooses
// -O1's threshold by cross-validation over shape families; writes the model and its lineage.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "driver/lm_keys.h"

namespace tlmc::driver {

struct VerifierOptions {
  std::vector<std::string> databases;           // tuning databases (--from-db, repeatable)
  std::string output;                           // -o: the model file; FILE.lineage beside it
  std::optional<std::filesystem::path> corpus;  // --corpus: the workloads' shape families
  std::optional<HeldOut> held_out;              // --hold-out: workloads left out
  int folds = 5;                                // --folds: cross-validation by shape family
  int drafts = 4;  // --drafts: records drawn per workload to stand for -O1's drafts
  // --max-slower: the share of held-out workloads -O1 may make slower than -O0 (by more
  // than 3%) at the threshold chosen
  double max_slower = 0.01;
};

// Trains, cross-validates, prints a table of thresholds and writes the model; 0 on success.
int train_verifier(const VerifierOptions& options);

}  // namespace tlmc::driver
