// Constrained decoding: every point the model writes (sampled, or mutated from another)
// lies in its subgraph's spaces, whatever the weights, for CPU and CUDA targets; the cached decoder
// computes what the training forward pass computes; a model trained on one demonstration writes it
// back by beam search.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "lm/generate.h"
#include "lm/lm_support.h"
#include "lm/train.h"
#include "scheduler/decision.h"
#include "scheduler/lower_schedule.h"
#include "scheduler/sketch_rules.h"

namespace tlmc::lm {
namespace {

using scheduler::Sketches;

GptConfig small_config() {
  return GptConfig{static_cast<int>(Vocabulary::get().size()), 512, 32, 2, 2, true};
}

TEST(ConstrainedDecoding, TenThousandSampledSchedulesAreAllValid) {
  // Random weights, hot sampling: the model's preferences are arbitrary, so any value the
  // mask let through that the space does not list would show.
  Gpt model(small_config(), 1);
  for (float& p : model.parameters()) p *= 20.0f;
  const std::vector<ir::TeProgram> programs = test::varied_programs();
  const std::vector<const char*> targets = {"x86-64-avx512", "x86-64-avx2", "cuda-sm80",
                                            "cuda-sm90"};
  const size_t per_program = 10000 / (targets.size() * programs.size()) + 1;
  size_t generated = 0, invalid = 0;
  uint64_t seed = 1;
  for (const char* target_name : targets) {
    const ir::Target target = *ir::parse_target(target_name);
    for (const ir::TeProgram& program : programs) {
      const Sketches sketches = scheduler::generate_sketches(program, target);
      const std::vector<Token> prompt = prompt_tokens(program, target);
      SampleOptions options;
      options.temperature = 2.0f;
      options.seed = seed++;
      for (const GeneratedPoint& g : sample_points(model, prompt, sketches, per_program, options)) {
        ++generated;
        try {
          const scheduler::ScheduleState st = scheduler::apply_schedule(
              program, sketches.at(g.point.sketch).decisions(g.point.values));
          scheduler::lower_schedule(st, "k");
        } catch (const scheduler::InvalidDecision& e) {
          ++invalid;
          ADD_FAILURE() << e.what();
        }
      }
    }
  }
  EXPECT_GE(generated, 10000u);
  EXPECT_EQ(invalid, 0u);
}

TEST(ConstrainedDecoding, TheCachedDecoderAgreesWithTheTrainingForwardPass) {
  Gpt model(small_config(), 2);
  for (float& p : model.parameters()) p *= 5.0f;
  const ir::Target target = *ir::parse_target("x86-64-avx512");
  const ir::TeProgram program = test::varied_programs().at(1);
  const Sketches sketches = scheduler::generate_sketches(program, target);
  const std::vector<Token> prompt = prompt_tokens(program, target);
  SampleOptions options;
  options.seed = 4;
  for (const GeneratedPoint& g : sample_points(model, prompt, sketches, 3, options)) {
    const Sentence s = tensor_sentence(prompt, sketches, g.point);
    const Batch b = make_batch({&s});
    const double loss = model.forward(b) * static_cast<double>(b.predictions.size());
    EXPECT_NEAR(-g.log_likelihood, loss, 1e-3 * loss);
  }
}

// The model's mutations of a point (-O2's steps from the fastest points measured): valid,
// like the point up to one redrawn decision (later ones kept where their space still lists
// them), and scored as the training forward pass scores them.
TEST(ConstrainedDecoding, MutationsRedrawOneDecisionAndStayValid) {
  Gpt model(small_config(), 5);
  for (float& p : model.parameters()) p *= 5.0f;
  std::mt19937_64 rng(9);
  size_t generated = 0, changed = 0;
  for (const char* target_name : {"x86-64-avx512", "x86-64-avx2"}) {
    const ir::Target target = *ir::parse_target(target_name);
    for (const ir::TeProgram& program : test::varied_programs()) {
      const Sketches sketches = scheduler::generate_sketches(program, target);
      const std::vector<Token> prompt = prompt_tokens(program, target);
      SampleOptions options;
      options.temperature = 2.0f;
      options.seed = rng();
      // A point the model can write (its sketch fits the context).
      const scheduler::SpacePoint base =
          sample_points(model, prompt, sketches, 1, options).at(0).point;
      const std::vector<GeneratedPoint> mutations =
          sample_mutations(model, prompt, sketches, base, 40, options);
      ASSERT_EQ(mutations.size(), 40u);
      for (const GeneratedPoint& g : mutations) {
        ++generated;
        ASSERT_EQ(g.point.sketch, base.sketch);
        ASSERT_EQ(g.point.values.size(), base.values.size());
        const scheduler::ScheduleState st = scheduler::apply_schedule(
            program, sketches.at(g.point.sketch).decisions(g.point.values));
        scheduler::lower_schedule(st, "k");
        changed += !(g.point == base);
        // After the first decision that differs (the redrawn one), each keeps base's value
        // wherever its space lists it.
        scheduler::SketchCursor cursor(sketches.at(base.sketch));
        bool differed = false;
        for (size_t i = 0; i < base.values.size(); ++i) {
          const std::vector<int64_t>& valid = cursor.valid_values();
          if (differed && std::count(valid.begin(), valid.end(), base.values[i])) {
            EXPECT_EQ(g.point.values[i], base.values[i]) << "decision " << i;
          }
          differed = differed || g.point.values[i] != base.values[i];
          cursor.choose(g.point.values[i]);
        }
      }
      const Sentence s = tensor_sentence(prompt, sketches, mutations.front().point);
      const Batch b = make_batch({&s});
      const double loss = model.forward(b) * static_cast<double>(b.predictions.size());
      EXPECT_NEAR(-mutations.front().log_likelihood, loss, 1e-3 * loss);
    }
  }
  // Only decisions with another value to take are redrawn: every mutation differs.
  EXPECT_EQ(changed, generated);
}

TEST(ConstrainedDecoding, AModelTrainedOnOneDemonstrationWritesItBackByBeamSearch) {
  Gpt model(small_config(), 3);
  const ir::Target target = *ir::parse_target("x86-64-avx512");
  const ir::TeProgram program = test::varied_programs().at(0);
  const Sketches sketches = scheduler::generate_sketches(program, target);
  const std::vector<Token> prompt = prompt_tokens(program, target);
  std::mt19937_64 rng(8);
  const scheduler::SpacePoint demo = scheduler::random_point(sketches, rng);
  const Sentence s = tensor_sentence(prompt, sketches, demo);
  const Batch batch = make_batch({&s});
  AdamWOptions o;
  o.learning_rate = 1e-2f;
  o.warmup_steps = 5;
  o.total_steps = 60;
  AdamWState state;
  float first = 0, last = 0;
  for (int step = 0; step < o.total_steps; ++step) {
    model.zero_gradients();
    last = model.forward(batch);
    if (step == 0) first = last;
    model.backward();
    adamw_step(model, state, o);
  }
  EXPECT_LT(last, 0.1f * first) << "training on one sentence lowers its loss";
  const std::vector<GeneratedPoint> best = beam_search(model, prompt, sketches, 4);
  ASSERT_FALSE(best.empty());
  EXPECT_EQ(best.front().point, demo);
  for (size_t i = 1; i < best.size(); ++i)
    EXPECT_LE(best[i].log_likelihood, best[i - 1].log_likelihood);
}

// Whether the space's axis names virtual threads (a space added after the bundled CUDA
// model was trained).
bool names_virtual_threads(const scheduler::Space& s) {
  return s.axis.size() > 9 && s.axis.compare(s.axis.size() - 9, 9, ".vthreads") == 0;
}

// The value each space of `point` took, with the -O0 policy's value there.
std::vector<std::pair<int64_t, int64_t>> virtual_thread_values(const scheduler::Sketch& sketch,
                                                               const std::vector<int64_t>& values) {
  std::vector<std::pair<int64_t, int64_t>> out;
  scheduler::SketchCursor cursor(sketch);
  for (int64_t v : values) {
    if (names_virtual_threads(cursor.space())) out.emplace_back(v, cursor.default_value());
    cursor.choose(v);
  }
  return out;
}

// A model trained before a space existed cannot name it (its words lie beyond the model's
// vocabulary): sampling, beam search and mutations give it the -O0 policy's value (the
// mutations: their base's), and the model decides the rest as before. A model of the whole
// vocabulary decides it like any other.
TEST(ConstrainedDecoding, ASpaceTheModelCannotNameTakesTheRulesValue) {
  const ir::Target target = *ir::parse_target("cuda-sm80");
  GptConfig older = small_config();
  older.vocab = static_cast<int>(*Vocabulary::get().find("vthreads"));
  size_t seen = 0, other_values = 0;
  for (const GptConfig& config : {older, small_config()}) {
    Gpt model(config, 6);
    for (float& p : model.parameters()) p *= 20.0f;
    const bool knows = config.vocab == small_config().vocab;
    for (const ir::TeProgram& program : test::varied_programs()) {
      const Sketches sketches = scheduler::generate_sketches(program, target);
      const std::vector<scheduler::Space> spaces = sketches.at(0).spaces();
      if (std::none_of(spaces.begin(), spaces.end(), names_virtual_threads)) continue;
      const std::vector<Token> prompt = prompt_tokens(program, target);
      SampleOptions options;
      options.temperature = 2.0f;
      options.seed = 11;
      std::vector<GeneratedPoint> points = sample_points(model, prompt, sketches, 16, options);
      const std::vector<GeneratedPoint> beam = beam_search(model, prompt, sketches, 2);
      points.insert(points.end(), beam.begin(), beam.end());
      for (const GeneratedPoint& g : points)
        for (const auto& [value, rule] :
             virtual_thread_values(sketches.at(g.point.sketch), g.point.values)) {
          ++seen;
          if (!knows) {
            EXPECT_EQ(value, rule);
          }
          other_values += knows && value != rule;
        }
      if (knows) continue;
      // Mutations of a point whose virtual threads are not the rule's keep them wherever
      // their space still lists them.
      std::mt19937_64 rng(3);
      const scheduler::SpacePoint base = scheduler::random_point(sketches, rng);
      for (const GeneratedPoint& g : sample_mutations(model, prompt, sketches, base, 10, options)) {
        scheduler::SketchCursor cursor(sketches.at(base.sketch));
        for (size_t i = 0; i < base.values.size(); ++i) {
          const std::vector<int64_t>& valid = cursor.valid_values();
          if (names_virtual_threads(cursor.space()) &&
              std::count(valid.begin(), valid.end(), base.values[i])) {
            EXPECT_EQ(g.point.values[i], base.values[i]) << "decision " << i;
          }
          cursor.choose(g.point.values[i]);
        }
      }
    }
  }
  EXPECT_GT(seen, 50u) << "the programs have products tiled for threads";
  EXPECT_GT(other_values, 0u) << "a model of the whole vocabulary decides the space";
}

// What an older model learns from (a fine-tuning demonstration) is what it is asked to write:
// the sentence leaves out the spaces it cannot name, and parses back, with those spaces
// given their values, to the point; for the whole vocabulary nothing is left out.
TEST(ConstrainedDecoding, ASentenceForAnOlderModelLeavesOutTheSpacesItCannotName) {
  const ir::Target target = *ir::parse_target("cuda-sm80");
  const Token vthreads = *Vocabulary::get().find("vthreads");
  const KnownWords older{static_cast<size_t>(vthreads), true};
  size_t checked = 0;
  for (const ir::TeProgram& program : test::varied_programs()) {
    const Sketches sketches = scheduler::generate_sketches(program, target);
    const std::vector<scheduler::Space> spaces = sketches.at(0).spaces();
    if (std::none_of(spaces.begin(), spaces.end(), names_virtual_threads)) continue;
    const std::vector<Token> prompt = prompt_tokens(program, target);
    std::mt19937_64 rng(checked + 5);
    scheduler::SpacePoint point = scheduler::random_point(sketches, rng);
    point.sketch = 0;
    scheduler::SketchCursor cursor(sketches.at(0));
    point.values.clear();
    while (!cursor.done()) {
      const std::vector<int64_t>& valid = cursor.valid_values();
      point.values.push_back(valid[rng() % valid.size()]);
      cursor.choose(point.values.back());
    }
    const Sentence whole = tensor_sentence(prompt, sketches, point);
    const Sentence shorter = tensor_sentence(prompt, sketches, point, older);
    EXPECT_EQ(std::count(whole.tokens.begin(), whole.tokens.end(), vthreads),
              std::count_if(spaces.begin(), spaces.end(), names_virtual_threads));
    EXPECT_EQ(std::count(shorter.tokens.begin(), shorter.tokens.end(), vthreads), 0);
    EXPECT_LT(shorter.tokens.size(), whole.tokens.size());
    EXPECT_EQ(shorter.tokens.size(), shorter.choices.size());
    for (const std::vector<Token>& choice : shorter.choices)
      for (Token t : choice) EXPECT_LT(t, vthreads);
    const std::vector<Token> decisions(whole.tokens.begin() + static_cast<long>(prompt.size()),
                                       whole.tokens.end());
    EXPECT_EQ(parse_sentence(sketches, decisions), point);
    // A model of the CPU's words alone cannot name a CUDA sketch, nor can a CPU model that
    // knows every later word (`tlmc lm finetune` grows it).
    EXPECT_THROW(tensor_sentence(prompt, sketches, point, KnownWords{Vocabulary::get().cpu_size()}),
                 scheduler::InvalidDecision);
    EXPECT_THROW(tensor_sentence(prompt, sketches, point, KnownWords{SIZE_MAX, false}),
                 scheduler::InvalidDecision);
    ++checked;
  }
  EXPECT_GT(checked, 3u);
}

}  // namespace
}  // namespace tlmc::lm
