// The speedup model that checks -O1's drafts: it learns a relation between a schedule and the
// -O0 schedule from real loop features, gives the same trees for the same samples, reads
// back what it wrote, refuses a file that is not one with what to do, and keeps the -O0
// schedule unless a draft is predicted above its threshold.
#include <gtest/gtest.h>

#include <algorithm>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "lm/checkpoint.h"
#include "scheduler/partition.h"
#include "scheduler/sketch.h"
#include "tune/loop_features.h"
#include "tune/speedup_model.h"

namespace tlmc::tune {
namespace {

ir::TeProgram matmul() {
  const ir::Graph g = frontend::read_yaml_text(R"(
tlmc: 1
name: mm
inputs:
  a: {shape: [96, 80]}
  b: {shape: [80, 112]}
nodes:
  - {op: MatMul, inputs: [a, b], outputs: [c]}
  - {op: Relu, inputs: [c], outputs: [r]}
outputs: [r]
)",
                                               "mm.yaml");
  const scheduler::Partition p = scheduler::partition_graph(g);
  return ir::lower_subgraph(g, p.subgraphs.at(0)).program;
}

size_t feature_index(const std::string& name) {
  const std::vector<std::string>& names = loop_feature_names();
  return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
}

struct Fixture {
  ir::Target target = *ir::parse_target("x86-64-avx2");
  ir::TeProgram program = matmul();
  std::vector<scheduler::Decision> rule = scheduler::default_schedule(program, target);
  std::vector<std::vector<scheduler::Decision>> schedules;
  std::vector<SpeedupSample> samples;
  // The relation taught: a schedule is faster the wider its heaviest statement's vectors
  // are than the rule's (the difference of the two programs' features).
  size_t vector = loop_feature_names().size() + feature_index("s0.vector_extent");
  Fixture() {
    const std::vector<float> reference = schedule_features(program, target, rule);
    for (uint64_t seed = 0; seed < 120; ++seed) {
      schedules.push_back(scheduler::random_schedule(program, target, seed));
      SpeedupSample s;
      s.features = pair_features(schedule_features(program, target, schedules.back()), reference);
      s.log_speedup = s.features[vector] > 0 ? 0.5F : -0.5F;
      samples.push_back(std::move(s));
    }
  }
};

TEST(SpeedupModel, LearnsARelationDeterministicallyAndReadsBackWhatItWrote) {
  const Fixture f;
  size_t faster = 0;
  for (const SpeedupSample& s : f.samples) faster += s.log_speedup > 0;
  ASSERT_GT(faster, 10u) << "the random schedules should vary their vectors";
  ASSERT_LT(faster, f.samples.size() - 10);
  SpeedupModelInfo info;
  info.target = f.target.descriptor();
  info.lineage_digest = "0123456789abcdef";
  info.workloads = 1;
  info.threshold = 0.25F;
  const SpeedupModel model = SpeedupModel::fit(f.samples, info);
  std::vector<std::vector<float>> rows;
  for (const SpeedupSample& s : f.samples) rows.push_back(s.features);
  const std::vector<float> predicted = model.predict(rows);
  size_t agree = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    agree += (predicted[i] > 0) == (f.samples[i].log_speedup > 0);
  EXPECT_GE(agree, rows.size() * 95 / 100);

  EXPECT_EQ(SpeedupModel::fit(f.samples, info).to_bytes(), model.to_bytes());
  const SpeedupModel again = SpeedupModel::from_bytes("m.tsm", model.to_bytes());
  EXPECT_EQ(again.predict(rows), predicted);
  EXPECT_EQ(again.info().target, info.target);
  EXPECT_EQ(again.info().lineage_digest, info.lineage_digest);
  EXPECT_EQ(again.info().workloads, 1u);
  EXPECT_EQ(again.info().threshold, 0.25F);
  EXPECT_EQ(again.to_bytes(), model.to_bytes());
}

std::string refusal(const std::string& bytes) {
  try {
    SpeedupModel::from_bytes("m.tsm", bytes);
  } catch (const lm::CheckpointError& e) {
    return e.what();
  }
  return "read";
}

TEST(SpeedupModel, AFileThatIsNotOneIsRefusedWithWhatToDo) {
  const Fixture f;
  const std::string bytes = SpeedupModel::fit(f.samples, {}).to_bytes();
  EXPECT_EQ(refusal("not a model at all"), "m.tsm: not a tlmc speedup model");
  EXPECT_EQ(refusal(bytes.substr(0, bytes.size() - 7)), "m.tsm: the speedup model is truncated");
  EXPECT_EQ(refusal(bytes + "x"), "m.tsm: the speedup model has trailing bytes");
  std::string version = bytes;
  version[8] = 99;  // the format version follows the 8-byte magic
  EXPECT_EQ(refusal(version),
            "m.tsm: a speedup model of format 99, this tlmc reads format 1; train it again");
  std::string features = bytes;
  features[12] = 77;  // the loop features' version
  EXPECT_NE(refusal(features).find("m.tsm: a speedup model of loop features version 77"),
            std::string::npos)
      << refusal(features);
}

TEST(SpeedupModel, TheRuleIsKeptUnlessADraftIsPredictedAboveTheThreshold) {
  const Fixture f;
  const SpeedupModel model = SpeedupModel::fit(f.samples, {});
  const std::vector<std::vector<scheduler::Decision>> drafts(f.schedules.begin(),
                                                             f.schedules.begin() + 6);
  const DraftVerdict free =
      verify_drafts(model.with_threshold(-100), f.program, f.target, f.rule, drafts);
  ASSERT_EQ(free.predicted.size(), drafts.size());
  ASSERT_TRUE(free.chosen);
  EXPECT_EQ(free.predicted[*free.chosen],
            *std::max_element(free.predicted.begin(), free.predicted.end()));
  const DraftVerdict strict =
      verify_drafts(model.with_threshold(100), f.program, f.target, f.rule, drafts);
  EXPECT_FALSE(strict.chosen);
  EXPECT_EQ(strict.predicted, free.predicted);
  EXPECT_FALSE(verify_drafts(model, f.program, f.target, f.rule, {}).chosen);
}

}  // namespace
}  // namespace tlmc::tune
