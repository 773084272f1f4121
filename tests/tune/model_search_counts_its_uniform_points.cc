// The language model's search proposes new points only; where the model keeps writing points
// already proposed (a confident model), the rest of the round is drawn uniformly, and the
// search counts those, so that a benchmark of the model does not credit it with them.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "lm/default_model.h"
#include "lm/generate.h"
#include "lm/gpt.h"
#include "lm/vocabulary.h"
#include "scheduler/partition.h"
#include "scheduler/sketch_rules.h"
#include "tune/search_strategy.h"

namespace tlmc::tune {
namespace {

ir::TeProgram product() {
  const ir::Graph g = frontend::read_yaml_text(
      "tlmc: 1\nname: m\ninputs:\n  a: {shape: [37, 100]}\n  b: {shape: [100, 60]}\n"
      "nodes:\n  - {op: MatMul, inputs: [a, b], outputs: [c]}\noutputs: [c]\n",
      "m.yaml");
  const scheduler::Partition p = scheduler::partition_graph(g);
  return ir::lower_subgraph(g, p.subgraphs.at(0)).program;
}

TEST(ModelSearch, PointsDrawnUniformlyWhenTheModelRepeatsItselfAreCounted) {
  const ir::Target target = *ir::parse_target("x86-64-avx512");
  const ir::TeProgram program = product();
  const scheduler::Sketches sketches = scheduler::generate_sketches(program, target);
  const lm::Gpt model(lm::GptConfig{static_cast<int>(lm::Vocabulary::get().size()), 768, 16, 1, 2},
                      3);
  ModelSearchOptions greedy;  // each decision its likeliest value: every sample the same
  greedy.model = &model;
  greedy.top_k = 1;
  std::unique_ptr<SearchStrategy> search = make_model_search(sketches, program, target, greedy, 1);
  const std::vector<scheduler::SpacePoint> first = search->propose(12);
  ASSERT_EQ(first.size(), 12u);
  EXPECT_EQ(std::set<scheduler::SpacePoint>(first.begin(), first.end()).size(), 12u);
  // The beam's point and the one point greedy sampling writes (the beam's again, or another):
  // the rest were drawn uniformly.
  EXPECT_GE(search->uniform_fill(), 10);
  EXPECT_LE(search->uniform_fill(), 11);
  const int64_t after_first = search->uniform_fill();
  EXPECT_EQ(search->propose(6).size(), 6u);
  EXPECT_GE(search->uniform_fill(), after_first + 5) << "greedy samples repeat themselves";

  // A model that samples freely writes its own new points: none drawn uniformly.
  ModelSearchOptions free_sampling;
  free_sampling.model = &model;
  std::unique_ptr<SearchStrategy> sampling =
      make_model_search(sketches, program, target, free_sampling, 1);
  EXPECT_EQ(sampling->propose(12).size(), 12u);
  EXPECT_EQ(sampling->uniform_fill(), 0);
  // The other searches never count any.
  EXPECT_EQ(make_random_search(sketches, 1)->uniform_fill(), 0);
}

// A sketch the model cannot name (the bundled CUDA model predates cross_thread_product) is
// not the model's to write: its default point is measured in the first round.
TEST(ModelSearch, MeasuresTheDefaultPointOfEachSketchTheModelCannotName) {
  const ir::Target target = *ir::parse_target("cuda-sm80");
  const ir::Graph g = frontend::read_yaml_text(
      "tlmc: 1\nname: m\ninputs:\n  a: {shape: [1, 300]}\n  b: {shape: [300, 70]}\n"
      "nodes:\n  - {op: MatMul, inputs: [a, b], outputs: [c]}\noutputs: [c]\n",
      "m.yaml");
  const ir::TeProgram program =
      ir::lower_subgraph(g, scheduler::partition_graph(g).subgraphs.at(0)).program;
  const scheduler::Sketches sketches = scheduler::generate_sketches(program, target);
  ASSERT_EQ(sketches.size(), 2u);
  ASSERT_NE(sketches[1].name().find("cross_thread_product"), std::string::npos);
  ModelSearchOptions o;
  o.model = &lm::default_model(target);
  ASSERT_TRUE(lm::names_sketch(*o.model, sketches[0]));
  ASSERT_FALSE(lm::names_sketch(*o.model, sketches[1]));
  std::unique_ptr<SearchStrategy> search = make_model_search(sketches, program, target, o, 1);
  const std::vector<scheduler::SpacePoint> first = search->propose(8);
  const scheduler::SpacePoint unnamed{1, scheduler::default_values(sketches[1])};
  EXPECT_NE(std::find(first.begin(), first.end(), unnamed), first.end());
  // Once: a later round does not propose it again.
  const std::vector<scheduler::SpacePoint> second = search->propose(8);
  EXPECT_EQ(std::find(second.begin(), second.end(), unnamed), second.end());
}

}  // namespace
}  // namespace tlmc::tune
