// -O1's check of the language model's drafts (draft, then verify): a cost model shipped with
// tlmc predicts, without measuring, how much faster a schedule runs than the -O0 schedule of
// the same program, and -O1 leaves the -O0 schedule only for a draft predicted clearly faster.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/target.h"
#include "ir/te.h"
#include "scheduler/decision.h"

namespace tlmc::lm {
class BinaryReader;
}

namespace tlmc::tune {

// The file format (magic "TLMCSPD1", then this version); bumped with any change of layout.
constexpr uint32_t kSpeedupModelVersion = 1;

// The loop features (tune/loop_features.h) of `schedule` applied to `program`.
std::vector<float> schedule_features(const ir::TeProgram& program, const ir::Target& target,
                                     const std::vector<scheduler::Decision>& schedule);

// What the model reads of a candidate and the reference (-O0) schedule of the same program:
// the candidate's loop features, then the candidate's minus the reference's.
std::vector<float> pair_features(const std::vector<float>& candidate,
                                 const std::vector<float>& reference);

// One measured pair to learn from.
struct SpeedupSample {
  std::vector<float> features;  // pair_features
  float log_speedup = 0;        // ln(the reference's time / the candidate's time)
  float weight = 1;             // each workload weighs the same in all: 1 / its pairs
};

// What a model file says of itself beside its trees.
struct SpeedupModelInfo {
  std::string target;          // descriptor of the machine its records were timed on
  std::string lineage_digest;  // of the workloads it trained on (lm/lineage.h), "" unknown
  uint32_t workloads = 0;      // how many
  float threshold = 0;         // -O1 leaves -O0 for a draft predicted above this ln speedup
};

// Gradient-boosted trees (XGBoost) from pair features to the ln speedup; immutable once made.
class SpeedupModel {
 public:
  // Trains on `samples`: the same samples give the same trees.
  static SpeedupModel fit(const std::vector<SpeedupSample>& samples, SpeedupModelInfo info);
  // Reads a model file's bytes; lm::CheckpointError naming `name` where they are not one of
  // this version, or the trees do not read back.
  static SpeedupModel from_bytes(const std::string& name, std::string bytes);
  static SpeedupModel load(const std::string& path);
  // Writes the file whole or not at all; lm::CheckpointError when it cannot.
  void save(const std::string& path) const;
  std::string to_bytes() const;

  // The predicted ln speedup of each row of pair features.
  std::vector<float> predict(const std::vector<std::vector<float>>& pairs) const;
  const SpeedupModelInfo& info() const { return info_; }
  // The same trees with another threshold.
  SpeedupModel with_threshold(float threshold) const;

 private:
  static SpeedupModel read(lm::BinaryReader& r, const std::string& name);
  std::shared_ptr<void> booster_;  // XGBoost's BoosterHandle, freed with the last copy
  SpeedupModelInfo info_;
};

// The model tlmc ships (tune/default_speedup_model.tsm, assembled into the library; docs/lm.md
// says how it was trained); nullptr where the build bundles none (an empty file).
const SpeedupModel* default_speedup_model();

// The verdict on a program's drafts: the one to compile (nullopt: keep the reference), and
// each draft's predicted ln speedup.
struct DraftVerdict {
  std::optional<size_t> chosen;
  std::vector<float> predicted;
};
DraftVerdict verify_drafts(const SpeedupModel& model, const ir::TeProgram& program,
                           const ir::Target& target,
                           const std::vector<scheduler::Decision>& reference,
                           const std::vector<std::vector<scheduler::Decision>>& drafts);

}  // namespace tlmc::tune
