// `tlmc lm verifier` trains the speedup model on measured records (each paired with its
// workload's -O0 record), cross-validates it by shape family, writes it with its lineage, and
// -O1 then keeps the -O0 schedule unless a draft is predicted clearly faster; --verifier none
// takes the likeliest draft as it is; a held-out family is not trained on; bad files and too
// few records are refused with what to do.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ir/target.h"
#include "lm/lineage.h"
#include "scheduler/tuning_db.h"
#include "support/test_support.h"
#include "tune/speedup_model.h"

namespace tlmc {
namespace {

using test::run_command;

const std::string kExamples = std::string(TLMC_SOURCE_DIR) + "/examples/";

std::string tlmc(const std::string& args) { return std::string(TLMC_EXE) + " " + args + " 2>&1"; }

// key -> family, as a corpus lists them.
std::map<std::string, std::string> sampled_families(const std::string& keys_file) {
  std::map<std::string, std::string> out;
  std::ifstream keys(keys_file);
  for (std::string line; std::getline(keys, line);) {
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string f; std::getline(split, f, '\t');) fields.push_back(f);
    if (fields.size() == 4) out[fields[0]] = fields[3];
  }
  return out;
}

TEST(Verifier, IsTrainedOnRecordsAndChecksTheDraftsOfO1) {
  if (!ir::host_target().runs_here) GTEST_SKIP() << "demonstrate measures on this machine";
  test::TempDir dir;
  const std::string corpus = dir.file("corpus");
  ASSERT_EQ(run_command(tlmc("lm sample " + corpus + " " + kExamples + "mlp.yaml " + kExamples +
                             "resnet_block.yaml --per-subgraph 1"))
                .exit_code,
            0);
  std::map<std::string, std::string> families;
  for (const auto& entry : std::filesystem::directory_iterator(corpus + "/sentences"))
    if (entry.path().extension() == ".keys")
      for (const auto& [key, family] : sampled_families(entry.path().string()))
        families[key] = family;
  ASSERT_GE(families.size(), 4u);
  test::CommandResult measured = run_command(tlmc("lm demonstrate " + corpus + " --tuning-db " +
                                                  dir.file("t.db") + " --subgraphs 4 --trials 5"));
  ASSERT_EQ(measured.exit_code, 0) << measured.out;

  const std::string train = "lm verifier " + dir.file("t.db") + " --corpus " + corpus +
                            " --folds 2 -o " + dir.file("v.tsm");
  test::CommandResult trained = run_command(tlmc(train));
  ASSERT_EQ(trained.exit_code, 0) << trained.out;
  EXPECT_NE(trained.out.find("tlmc lm verifier: 4 workloads, 24 measured pairs (left out of 4: 0 "
                             "held out"),
            std::string::npos)
      << trained.out;
  EXPECT_NE(trained.out.find("| threshold (ln speedup) | -O1 time / -O0 (geomean) |"),
            std::string::npos)
      << trained.out;
  EXPECT_NE(trained.out.find("(chosen)**"), std::string::npos) << trained.out;
  const tune::SpeedupModel model = tune::SpeedupModel::load(dir.file("v.tsm"));
  const lm::Lineage lineage = lm::read_lineage(dir.file("v.tsm.lineage"));
  ASSERT_EQ(lineage.stages.size(), 1u);
  EXPECT_EQ(lineage.stages[0].kind, "verifier");
  EXPECT_EQ(lineage.stages[0].keys.size(), 4u);
  for (const auto& [key, family] : lineage.stages[0].keys) EXPECT_EQ(family, families[key]);
  EXPECT_EQ(model.info().lineage_digest, lm::lineage_digest(lineage));
  EXPECT_EQ(model.info().workloads, 4u);
  EXPECT_EQ(model.info().target, ir::host_target().descriptor());

  // -O1 with it: every kernel's drafts are checked, and the library checks out.
  const std::string o1 = kExamples + "mlp.yaml -O1 --check -v --tuning-db " + dir.file("n.db");
  test::CommandResult checked = run_command(tlmc(o1 + " --verifier " + dir.file("v.tsm")));
  ASSERT_EQ(checked.exit_code, 0) << checked.out;
  const bool kept =
      checked.out.find("-O1 keeps the -O0 schedule (the language model's ") != std::string::npos;
  const bool took = checked.out.find("-O1 takes the language model's draft ") != std::string::npos;
  EXPECT_TRUE(kept || took) << checked.out;
  test::CommandResult unchecked = run_command(tlmc(o1 + " --verifier none"));
  ASSERT_EQ(unchecked.exit_code, 0) << unchecked.out;
  EXPECT_EQ(unchecked.out.find("-O1 keeps"), std::string::npos) << unchecked.out;
  EXPECT_EQ(unchecked.out.find("-O1 takes"), std::string::npos) << unchecked.out;
  test::CommandResult bad = run_command(tlmc(o1 + " --verifier " + dir.file("t.db")));
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(
      bad.out.find("tlmc: error: --verifier: " + dir.file("t.db") + ": not a tlmc speedup model"),
      std::string::npos)
      << bad.out;

  // A held-out family is neither trained on nor listed.
  const std::string first = lineage.stages[0].keys.begin()->first;
  const std::string held_family = families[first];
  size_t of_family = 0;
  for (const auto& [key, family] : lineage.stages[0].keys) of_family += family == held_family;
  std::set<std::string> trained_families;
  for (const auto& [key, family] : lineage.stages[0].keys) trained_families.insert(family);
  ASSERT_GE(trained_families.size(), 3u) << "two families are left when one is held out";
  test::write_file(dir.file("hold.txt"), "family " + held_family + "\n");
  test::CommandResult held = run_command(tlmc(train + " --hold-out " + dir.file("hold.txt")));
  ASSERT_EQ(held.exit_code, 0) << held.out;
  EXPECT_NE(held.out.find("(left out of 4: " + std::to_string(of_family) + " held out"),
            std::string::npos)
      << held.out;
  const lm::Lineage without = lm::read_lineage(dir.file("v.tsm.lineage"));
  ASSERT_EQ(without.stages.size(), 1u);
  EXPECT_EQ(without.stages[0].keys.size(), 4 - of_family);
  for (const auto& [key, family] : without.stages[0].keys) EXPECT_NE(family, held_family);

  // Records of a single family cannot be cross-validated.
  test::CommandResult few =
      run_command(tlmc("lm verifier " + dir.file("t.db") + " --folds 2 --hold-out " +
                       dir.file("hold.txt") + " -o " + dir.file("w.tsm")));
  EXPECT_EQ(few.exit_code, 1) << few.out;
  EXPECT_NE(few.out.find("too few to cross-validate; measure more (tlmc lm demonstrate)"),
            std::string::npos)
      << few.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("w.tsm")));
  test::CommandResult usage =
      run_command(tlmc("lm verifier " + dir.file("t.db") + " --folds 1 -o " + dir.file("w.tsm")));
  EXPECT_EQ(usage.exit_code, 2) << usage.out;
  EXPECT_NE(usage.out.find("--folds takes a count >= 2 and --drafts one >= 1"), std::string::npos)
      << usage.out;
}

}  // namespace
}  // namespace tlmc
