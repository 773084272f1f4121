// A language model's lineage: the subgraphs each of its training stages trained on (pretrain
// on a corpus, each fine-tuning round on demonstrations and rehearsed sentences), in order,
// and a digest chained over them that the model file keeps. Anyone holding the lists can
// recompute the digest and compare it with the model's: the lists are then the whole of
// what the model was trained on, each subgraph named by workload key and shape family.
//
// The text form (a model's `MODEL.tlm.lineage`, written beside it):
//   # tlmc lineage 1 ...                the format's version, then comments
//   stage pretrain                       a stage: its kind, then one line per subgraph
//   KEY\tFAMILY                          sorted by key; FAMILY empty where nobody knew it
//   digest 0123456789abcdef              the digest up to and including this stage
//   from 0123456789abcdef                (first line only) a parent whose lists are not here
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tlmc::lm {

constexpr int kLineageVersion = 1;

// A lineage file that cannot be read, or whose digests do not follow from its lists; the
// message names the file and line.
class LineageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LineageStage {
  std::string kind;                         // "pretrain" or "finetune"
  std::map<std::string, std::string> keys;  // workload key -> shape family ("" unknown)
};

struct Lineage {
  // The digest of a parent model whose stages are not listed (a model file without its
  // lineage beside it); the digest chain starts from it. nullopt: from nothing.
  std::optional<std::string> from;
  std::vector<LineageStage> stages;
};

// The digest after every stage (16 hex digits): FNV-1a over the previous digest ("" at the
// start, else `from`) and the stage's kind and lines. Empty for a lineage of no stage.
std::string lineage_digest(const Lineage& lineage);

// The lineage of a model whose lists are not at hand: its own digest ("from" it), or for a
// model written before lineages were kept (digest ""), a digest of its parameters.
Lineage unlisted_lineage(const std::string& digest, const std::vector<float>& parameters);

// The text form, every stage followed by its digest line.
std::string lineage_text(const Lineage& lineage);
// Writes `path` whole or not at all (a temporary file renamed over it); LineageError when
// it cannot.
void write_lineage(const std::string& path, const Lineage& lineage);
// Reads a lineage file and checks every digest line against the lists above it.
Lineage read_lineage(const std::string& path);

}  // namespace tlmc::lm
