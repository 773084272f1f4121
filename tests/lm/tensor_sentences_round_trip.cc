// Tensor sentences: every point drawn from a subgraph's spaces is written and read back to the
// same point (and schedule text); a sentence that leaves its spaces does not parse.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "lm/lm_support.h"
#include "lm/tensor_sentence.h"
#include "scheduler/sketch_rules.h"

namespace tlmc::lm {
namespace {

using scheduler::Sketches;
using scheduler::SpacePoint;

std::vector<Token> decisions_of(const Sentence& s, size_t prompt) {
  return std::vector<Token>(s.tokens.begin() + static_cast<std::ptrdiff_t>(prompt), s.tokens.end());
}

TEST(TensorSentence, RandomPointsRoundTripOnEveryTarget) {
  std::mt19937_64 rng(5);
  int points = 0;
  for (const char* target_name : {"x86-64-avx512", "x86-64-avx2", "cuda-sm80", "cuda-sm90"}) {
    const ir::Target target = *ir::parse_target(target_name);
    for (const ir::TeProgram& program : test::varied_programs()) {
      const Sketches sketches = scheduler::generate_sketches(program, target);
      const std::vector<Token> prompt = prompt_tokens(program, target);
      for (int draw = 0; draw < 10; ++draw, ++points) {
        const SpacePoint point = scheduler::random_point(sketches, rng);
        const Sentence s = tensor_sentence(prompt, sketches, point);
        ASSERT_EQ(s.tokens.size(), s.choices.size());
        // Each decision's token is among its choices.
        for (size_t i = 0; i < s.tokens.size(); ++i) {
          if (s.choices[i].empty()) continue;
          EXPECT_NE(std::find(s.choices[i].begin(), s.choices[i].end(), s.tokens[i]),
                    s.choices[i].end());
        }
        const std::optional<SpacePoint> back =
            parse_sentence(sketches, decisions_of(s, prompt.size()));
        ASSERT_TRUE(back) << sentence_text(s.tokens);
        EXPECT_EQ(*back, point);
        EXPECT_EQ(scheduler::space_schedule_text(sketches, *back),
                  scheduler::space_schedule_text(sketches, point));
      }
    }
  }
  EXPECT_GT(points, 400);
}

TEST(TensorSentence, TheExamplesPromptsAndSpacesHaveNoUnknownWord) {
  for (const char* target_name : {"x86-64-avx512", "cuda-sm80"}) {
    const ir::Target target = *ir::parse_target(target_name);
    for (const ir::TeProgram& program : test::varied_programs()) {
      std::vector<Token> tokens = prompt_tokens(program, target);
      for (const scheduler::Sketch& sketch : scheduler::generate_sketches(program, target))
        for (const scheduler::Space& space : sketch.spaces()) {
          const std::vector<Token> name = space_tokens(space);
          tokens.insert(tokens.end(), name.begin(), name.end());
        }
      EXPECT_EQ(std::count(tokens.begin(), tokens.end(), Vocabulary::kUnk), 0)
          << target_name << ": " << sentence_text(tokens) << "\n"
          << ir::te_str(program);
    }
  }
}

// The CUDA words came after the CPU model was trained: a CPU target's sentences use none of
// them, so that model reads them as before; a CUDA target's prompt names its descriptor.
TEST(TensorSentence, CpuSentencesUseNoCudaWordAndCudaPromptsNameTheGpu) {
  const Vocabulary& v = Vocabulary::get();
  ASSERT_LT(v.cpu_size(), v.size());
  std::mt19937_64 rng(3);
  const ir::Target cpu = *ir::parse_target("x86-64-avx512");
  for (const ir::TeProgram& program : test::varied_programs()) {
    const Sketches sketches = scheduler::generate_sketches(program, cpu);
    const Sentence s = tensor_sentence(prompt_tokens(program, cpu), sketches,
                                       scheduler::random_point(sketches, rng));
    for (Token t : s.tokens) EXPECT_LT(static_cast<size_t>(t), v.cpu_size()) << v.text(t);
  }
  const ir::TeProgram program = test::varied_programs().back();
  const std::string text = sentence_text(prompt_tokens(program, *ir::parse_target("cuda-sm80")));
  // A100-SXM: 108 SMs, 64 Ki registers per SM and block, 48/163/164 KiB of shared memory,
  // 40960 KiB of L2 and 19492 GFLOP/s (above the largest number token: two digits), 2039 GB/s.
  EXPECT_NE(text.find("hw gpu sm 80 sms 108 warp 32 threads 1024 2048 blocks 32 regs 64 64 255 "
                      "smem 48 163 164 l2 num2 9 4087 bw 2039 peak num2 4 3104 sketch"),
            std::string::npos)
      << text;
}

TEST(TensorSentence, APromptNamesTheOperatorTheExtentsAndTheHardware) {
  const ir::TeProgram program = test::varied_programs().back();  // the depthwise convolution
  ir::Target target = *ir::parse_target("x86-64-avx2");
  target.cores = 2;
  target.l1_bytes = 48 * 1024;
  target.l2_bytes = 2048 * 1024;
  target.l3_bytes = 8192 * 1024;  // above the largest number token: written in two digits
  target.cpu = "amd-25-97";
  const std::string text = sentence_text(prompt_tokens(program, target));
  // The padding stage (a stage of the convolution, named "pad"), reading the input shifted.
  EXPECT_EQ(text.rfind("<bos> stage conv pad float32 p 0 1 p 1 12 p 2 11 p 3 11 load input", 0), 0u)
      << text;
  EXPECT_NE(text.find("dim p 2 + - 1 dim p 3 + - 1"), std::string::npos) << text;
  // The convolution: its axes, reductions and the loads of the padded input and the weights.
  EXPECT_NE(text.find("stage conv float32 red sum n 1 oc 12 oh 9 ow 9 red ic 1 red kh 3 red kw 3 "
                      "load temp dim n dim oc + ic dim oh + kh dim ow + kw "
                      "load const dim oc dim ic dim kh dim kw hw"),
            std::string::npos)
      << text;
  EXPECT_NE(
      text.find("hw isa avx2 vec 32 cores 2 l1d 48 l2 2048 l3 num2 1 4095 cpu amd warm sketch"),
      std::string::npos)
      << text;
}

TEST(TensorSentence, SentencesOutsideTheSpacesDoNotParse) {
  const ir::Target target = *ir::parse_target("x86-64-avx512");
  const ir::TeProgram program = test::varied_programs().front();
  const Sketches sketches = scheduler::generate_sketches(program, target);
  std::mt19937_64 rng(9);
  const SpacePoint point = scheduler::random_point(sketches, rng);
  const std::vector<Token> prompt = prompt_tokens(program, target);
  const Sentence s = tensor_sentence(prompt, sketches, point);
  const std::vector<Token> good = decisions_of(s, prompt.size());
  ASSERT_TRUE(parse_sentence(sketches, good));

  const Vocabulary& v = Vocabulary::get();
  // A value the space does not list: the first tile value replaced by one no extent divides.
  std::vector<Token> bad = good;
  for (size_t i = 0; i < bad.size(); ++i)
    if (!s.choices[prompt.size() + i].empty() && i > 0) {
      bad[i] = v.number(scheduler::kLargestSpaceValue);
      break;
    }
  EXPECT_FALSE(parse_sentence(sketches, bad));
  // No end, an extra token, an unknown sketch, a space name out of place.
  EXPECT_FALSE(parse_sentence(sketches, std::vector<Token>(good.begin(), good.end() - 1)));
  bad = good;
  bad.push_back(Vocabulary::kEos);
  EXPECT_FALSE(parse_sentence(sketches, bad));
  bad = good;
  bad[0] = v.at("none");
  EXPECT_FALSE(parse_sentence(sketches, bad));
  bad = good;
  bad[1] = v.at("stage");
  EXPECT_FALSE(parse_sentence(sketches, bad));
  // A point with a value the space does not list is refused when written.
  SpacePoint wrong = point;
  wrong.values[0] = scheduler::kLargestSpaceValue;
  EXPECT_THROW(tensor_sentence(prompt, sketches, wrong), scheduler::InvalidDecision);
}

TEST(Vocabulary, EveryValueASpaceCanListAndEverySketchNameHasAToken) {
  const Vocabulary& v = Vocabulary::get();
  for (int64_t x = 0; x <= scheduler::kLargestSpaceValue; ++x)
    EXPECT_EQ(v.value_of(v.number(x)), x);
  EXPECT_FALSE(v.value_of(Vocabulary::kEos));
  for (const char* target_name : {"x86-64-avx512", "cuda-sm80"}) {
    const ir::Target target = *ir::parse_target(target_name);
    for (const ir::TeProgram& program : test::varied_programs())
      for (const scheduler::Sketch& s : scheduler::generate_sketches(program, target))
        EXPECT_TRUE(v.find(s.name())) << s.name();
  }
}

// Models record the fingerprint of the tokens they know: a token changed or renumbered
// without a new language version would let old models read it. Tokens are only appended: the
// CPU part, which the bundled CPU model knows, keeps its fingerprint; the whole vocabulary
// (CUDA words appended) has its own, and so has each prefix a bundled model knows. Change the
// version, or append, then these pins.
TEST(Vocabulary, TheFingerprintIsPinnedToTheLanguageVersion) {
  const Vocabulary& v = Vocabulary::get();
  EXPECT_EQ(kLanguageVersion, 1u);
  EXPECT_EQ(v.cpu_size(), 4305u);
  EXPECT_EQ(v.fingerprint(v.cpu_size()), 17121409337385955150ull);
  EXPECT_EQ(v.known_prefix(17121409337385955150ull), v.cpu_size());
  // The 4,378 tokens of a CUDA model trained before the words of virtual threads.
  EXPECT_EQ(v.fingerprint(4378), 6788129029311494348ull);
  EXPECT_EQ(v.known_prefix(6788129029311494348ull), 4378u);
  // The 4,379 tokens of the bundled CUDA model (with "vthreads"), before "tensorize".
  EXPECT_EQ(v.fingerprint(4379), 16384729924040474673ull);
  EXPECT_EQ(v.known_prefix(16384729924040474673ull), 4379u);
  // The 4,380 tokens through "tensorize", before the element type float64.
  EXPECT_EQ(v.fingerprint(4380), 6329610189339059254ull);
  EXPECT_EQ(v.known_prefix(6329610189339059254ull), 4380u);
  // The 4,381 tokens through float64, before the sketch names with cross_thread_product.
  EXPECT_EQ(v.fingerprint(4381), 2050673183687542234ull);
  EXPECT_EQ(v.known_prefix(2050673183687542234ull), 4381u);
  EXPECT_EQ(v.size(), 4445u);
  EXPECT_TRUE(v.find("cross_thread_product") && *v.find("cross_thread_product") >= 4381);
  EXPECT_EQ(v.fingerprint(), 12783236670297793370ull) << v.size() << " tokens";
  EXPECT_EQ(v.known_prefix(v.fingerprint()), v.size());
  EXPECT_FALSE(v.known_prefix(12345));
}

}  // namespace
}  // namespace tlmc::lm
