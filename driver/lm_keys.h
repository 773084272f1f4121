// Workload keys and shape families in the language model's pipeline: the corpus's `.keys`
// files, --hold-out files, what a model was trained on, and the `tlmc lm keys` and
// `tlmc lm overlap` commands that print them (docs/lm.md).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "driver/layout_plans.h"
#include "ir/target.h"

namespace tlmc::driver {

// What a --hold-out FILE keeps out of a corpus or a fine-tuning: subgraphs by exact workload
// key, and whole shape families by normalised key (ir/normalised_key.h). The file's lines:
//   KEY ...                 a workload key (16 hex digits), whatever follows it
//   KEY\tMODEL\tPLAN\tFAMILY  as `tlmc lm keys` prints them: the key and its family both
//   family FAMILY           a normalised key alone
//   # ...                   a comment (so is an empty line)
struct HeldOut {
  std::set<std::string> keys, families;
  bool holds(const std::string& key, const std::string& family) const {
    return keys.count(key) > 0 || families.count(family) > 0;
  }
};
// Reads a hold-out file; a Diagnostic at file:line for a line of none of those forms.
HeldOut read_held_out(const std::string& path);

// A `.keys` file as `sample` wrote it, in order: each subgraph's workload key, the absolute
// path of the model it came from, and its shape family ("" in a corpus sampled before the
// files recorded it; a third column, skipped, names the layout plan).
struct SampledKey {
  std::string key, model, family;
};
std::vector<SampledKey> read_sampled_keys(const std::filesystem::path& path);
// Every subgraph of CORPUS's .keys files: workload key -> shape family ("" where unknown).
std::map<std::string, std::string> corpus_families(const std::filesystem::path& corpus);

// A model's distinct subgraphs on `target`, in all its layout plans; with `bf16`, those of
// `--precision bf16` (its products' operands in bfloat16, as the compile pipeline demotes them).
SplitModel split_model_file(const std::string& model, const ir::Target& target, bool bf16);

// `tlmc lm keys`: each distinct subgraph's key, model, plan and family, tab-separated.
int print_keys(const std::vector<std::string>& models, const ir::Target& target, bool bf16);

// What a language model was trained on, for `tlmc lm overlap`: any of a corpus, a tuning
// database (what finetune reads) and a lineage file (lm/lineage.h; all its stages).
struct TrainingSources {
  std::optional<std::filesystem::path> corpus;
  std::optional<std::string> tuning_db, lineage;
};
// `tlmc lm overlap`: each distinct subgraph of `models` that the sources hold by workload key
// ("exact") or by shape family alone ("family"), then a count per model.
int print_overlap(const std::vector<std::string>& models, const TrainingSources& sources,
                  const ir::Target& target, bool bf16);

}  // namespace tlmc::driver
