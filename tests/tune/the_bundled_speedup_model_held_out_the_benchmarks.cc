// The bundled speedup model's provenance: the lineage committed beside it
// (tune/default_speedup_model.tsm.lineage) reads back, its digest is the one the bundled
// model keeps, it lists as many workloads as the model says, and none of them is held out
// (lm/held_out_keys.txt: the benchmark models', W1-W6's and the unseen shapes' subgraphs) by
// workload key or by shape family.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "lm/lineage.h"
#include "tune/speedup_model.h"

namespace tlmc::tune {
namespace {

const std::string kSource = TLMC_SOURCE_DIR;

TEST(BundledSpeedupModel, ItsLineageIsCommittedAndHoldsNothingHeldOut) {
  const SpeedupModel* model = default_speedup_model();
  ASSERT_NE(model, nullptr) << "tlmc bundles a speedup model";
  const lm::Lineage lineage = lm::read_lineage(kSource + "/tune/default_speedup_model.tsm.lineage");
  EXPECT_EQ(lm::lineage_digest(lineage), model->info().lineage_digest);
  ASSERT_EQ(lineage.stages.size(), 1u);
  EXPECT_EQ(lineage.stages[0].keys.size(), model->info().workloads);
  EXPECT_GT(model->info().workloads, 100u);

  std::set<std::string> keys, families;
  std::ifstream held(kSource + "/lm/held_out_keys.txt");
  for (std::string line; std::getline(held, line);) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("family ", 0) == 0) {
      families.insert(line.substr(7));
      continue;
    }
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string f; std::getline(split, f, '\t');) fields.push_back(f);
    keys.insert(fields[0].substr(0, 16));
    if (fields.size() == 4) families.insert(fields[3]);
  }
  ASSERT_GT(keys.size(), 500u);
  ASSERT_GT(families.size(), 100u);
  for (const auto& [key, family] : lineage.stages[0].keys) {
    EXPECT_FALSE(keys.count(key)) << key << " is held out";
    EXPECT_FALSE(family.empty()) << key << ": a workload of unknown family";
    EXPECT_FALSE(families.count(family)) << key << ": " << family << " is held out";
  }
}

}  // namespace
}  // namespace tlmc::tune
