// -O1 on a CUDA target: the best by the analytic model of the bundled CUDA language model's
// likeliest schedules and the -O0 point, checked in the emulator; a model that knows only CPU words
// is refused with what to do. The corpus of a CUDA model: `tlmc lm sample --decisions estimate`
// writes the analytic model's preferred point per subgraph (refused for a CPU target, whose
// schedules are measured instead), and a model pretrained on such sentences writes CUDA schedules
// that pass the check.
#include <gtest/gtest.h>

#include <filesystem>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "ir/te_text.h"
#include "lm/checkpoint.h"
#include "lm/default_model.h"
#include "lm/generate.h"
#include "lm/sentence_file.h"
#include "lm/tensor_sentence.h"
#include "scheduler/partition.h"
#include "scheduler/sketch_rules.h"
#include "scheduler/tuning_db.h"
#include "support/test_support.h"
#include "tune/gpu_estimate_search.h"

namespace tlmc::test {
namespace {

namespace fs = std::filesystem;

// A product and a row-wise Softmax of odd sizes: no listed workload has these shapes.
const char* kModel = R"(tlmc: 1
name: odd
inputs:
  x: {shape: [45, 72]}
weights:
  w: {shape: [72, 130], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: Softmax, inputs: [h], outputs: [y], attrs: {axis: 1}}
outputs: [y]
)";

std::string tlmc(const std::string& args) { return std::string(TLMC_EXE) + " " + args + " 2>&1"; }

TEST(CudaLanguageModel, TheBundledModelSpeaksCudaAndTheCpuModelDoesNot) {
  EXPECT_TRUE(lm::default_model(*ir::parse_target("cuda-sm80")).config().cuda);
  EXPECT_FALSE(lm::default_model(*ir::parse_target("x86-64")).config().cuda);
  const ir::Target cuda = *ir::parse_target("cuda-sm80");
  const ir::Target cpu = *ir::parse_target("x86-64-avx512");
  const ir::Graph g = frontend::read_yaml_text(kModel, "odd.yaml");
  for (const std::vector<int>& nodes : scheduler::partition_graph(g).subgraphs) {
    const ir::TeProgram program = ir::lower_subgraph(g, nodes).program;
    const scheduler::Sketches sketches = scheduler::generate_sketches(program, cuda);
    EXPECT_TRUE(lm::speaks(lm::default_model(cuda), sketches));
    EXPECT_FALSE(lm::speaks(lm::default_model(cpu), sketches));
    // Nor once grown to every word of the language, as `tlmc lm finetune` grows it.
    EXPECT_FALSE(lm::speaks(lm::with_whole_vocabulary(lm::default_model(cpu)), sketches));
    // The CUDA model's beam writes valid points of every subgraph; -O1 takes the best of them
    // and the -O0 point by the analytic model.
    const std::vector<lm::GeneratedPoint> beam =
        lm::beam_search(lm::default_model(cuda), lm::prompt_tokens(program, cuda), sketches, 4);
    ASSERT_FALSE(beam.empty());
    std::vector<scheduler::SpacePoint> points;
    for (const lm::GeneratedPoint& p : beam) points.push_back(p.point);
    const tune::EstimateChoice c = tune::choose_among(program, cuda, sketches, points);
    EXPECT_GE(c.ranked, 2);
    EXPECT_LE(c.chosen.seconds, c.default_point.seconds);
  }
}

TEST(CudaLanguageModel, MinusO1ChecksInTheEmulatorAndACpuModelIsRefused) {
  TempDir dir;
  write_file(dir.file("odd.yaml"), kModel);
  CommandResult r = run_command(tlmc("-O1 -v --target cuda-sm80 --check " + dir.file("odd.yaml")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the CUDA language model's likeliest points and the -O0 point: nothing "
                       "was measured"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("of the model's beam and each sketch's default point"), std::string::npos)
      << r.out;

  // The bundled CPU model, written to a file, knows no CUDA sketch.
  const ir::Target cpu = *ir::parse_target("x86-64-avx512");
  lm::save_checkpoint(dir.file("cpu.tlm"), lm::default_model(cpu));
  r = run_command(tlmc("-O1 --target cuda-sm80 --lm-model " + dir.file("cpu.tlm") + " -o " +
                       dir.file("out") + " --emit source " + dir.file("odd.yaml")));
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("does not know the words of cuda-sm80's schedules"), std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(dir.file("out"))) << "written half";
}

TEST(CudaLanguageModel, TheAnalyticModelsPreferencesAreACorpusToTrainOn) {
  TempDir dir;
  write_file(dir.file("odd.yaml"), kModel);
  const std::string corpus = dir.file("corpus");
  CommandResult r = run_command(tlmc("lm sample " + corpus + " " + dir.file("odd.yaml") +
                                     " --target host --decisions estimate"));
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("a CPU target's are measured"), std::string::npos) << r.out;
  r = run_command(tlmc("lm sample " + corpus + " " + dir.file("odd.yaml") +
                       " --target cuda-sm80 --decisions estimate"));
  ASSERT_EQ(r.exit_code, 0) << r.out;

  // One sentence per subgraph: the point choose_by_estimate prefers, which is no worse by the
  // analytic model than the -O0 point.
  const std::vector<lm::Sentence> sentences =
      lm::read_sentences(corpus + "/sentences/odd.cuda-sm80.bin");
  const ir::Target cuda = *ir::parse_target("cuda-sm80");
  const ir::Graph g = frontend::read_yaml_text(kModel, "odd.yaml");
  const std::vector<std::vector<int>> subgraphs = scheduler::partition_graph(g).subgraphs;
  ASSERT_EQ(sentences.size(), subgraphs.size());
  for (size_t i = 0; i < subgraphs.size(); ++i) {
    const ir::TeProgram program = ir::lower_subgraph(g, subgraphs[i]).program;
    const scheduler::Sketches sketches = scheduler::generate_sketches(program, cuda);
    const std::vector<lm::Token> prompt = lm::prompt_tokens(program, cuda);
    bool found = false;
    for (const lm::Sentence& s : sentences) {
      if (s.tokens.size() < prompt.size() ||
          !std::equal(prompt.begin(), prompt.end(), s.tokens.begin()))
        continue;
      found = true;
      const std::optional<scheduler::SpacePoint> point = lm::parse_sentence(
          sketches, std::vector<lm::Token>(s.tokens.begin() + static_cast<long>(prompt.size()),
                                           s.tokens.end()));
      ASSERT_TRUE(point);
      const uint64_t seed = std::stoull(ir::workload_key(program), nullptr, 16);
      EXPECT_EQ(*point, tune::choose_by_estimate(
                            program, cuda, scheduler::generate_sketches(program, cuda), 32, seed)
                            .point);
    }
    EXPECT_TRUE(found) << "no sentence of subgraph " << i;
  }

  // A (tiny) model pretrained on them writes -O1 schedules that pass the emulated check.
  r = run_command(tlmc("lm pretrain " + corpus +
                       " --channels 16 --layers 1 --heads 2 --steps 20 --context 768 -o " +
                       dir.file("cuda.tlm")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = run_command(tlmc("-O1 --target cuda-sm90 --lm-model " + dir.file("cuda.tlm") + " --check " +
                       dir.file("odd.yaml")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("check passed"), std::string::npos) << r.out;
}

// Records of a CUDA target (as -O2 measures them on a GPU) fine-tune the bundled CUDA model
// unless --model names another; a database of CPU and CUDA records needs --model.
TEST(CudaLanguageModel, FineTuningOnCudaRecordsStartsFromTheCudaModel) {
  const ir::Target cuda = *ir::parse_target("cuda-sm80");
  const ir::Graph g = frontend::read_yaml_text(kModel, "odd.yaml");
  TempDir dir;
  const std::string db_path = dir.file("t.db");
  auto record = [&](const ir::Target& target, const std::vector<int>& nodes) {
    const ir::TeProgram program = ir::lower_subgraph(g, nodes).program;
    const scheduler::Sketches sketches = scheduler::generate_sketches(program, target);
    scheduler::TuningRecord r;
    r.workload_key = ir::workload_key(program);
    r.target = target.descriptor();
    r.schedule = scheduler::space_schedule_text(
        sketches, scheduler::SpacePoint{0, scheduler::default_values(sketches[0])});
    r.seconds = 1e-5;
    r.measured_at = "2026-11-27T10:00:00Z";
    r.workload = ir::te_to_text(program);
    return r;
  };
  const std::vector<std::vector<int>> subgraphs = scheduler::partition_graph(g).subgraphs;
  {
    scheduler::TuningDb db = scheduler::TuningDb::open(db_path, scheduler::DbAccess::Write);
    for (const std::vector<int>& nodes : subgraphs) db.add({record(cuda, nodes)});
  }
  CommandResult r = run_command(
      tlmc("lm finetune --from-db " + db_path + " --epochs 1 --batch 1 -o " + dir.file("f.tlm")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("starting from the bundled CUDA model"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::to_string(subgraphs.size()) + " demonstrations"), std::string::npos)
      << r.out;
  const lm::Gpt tuned = lm::load_checkpoint(dir.file("f.tlm")).model;
  const ir::TeProgram program = ir::lower_subgraph(g, subgraphs[0]).program;
  EXPECT_TRUE(lm::speaks(tuned, scheduler::generate_sketches(program, cuda)));
  // With a CPU record beside them: which model to start from is the user's to say.
  {
    scheduler::TuningDb db = scheduler::TuningDb::open(db_path, scheduler::DbAccess::Write);
    db.add({record(*ir::parse_target("x86-64"), subgraphs[0])});
  }
  r = run_command(tlmc("lm finetune --from-db " + db_path + " --epochs 1 -o " + dir.file("g.tlm")));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("records of CPU and of CUDA targets"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir.file("g.tlm")));
}

}  // namespace
}  // namespace tlmc::test
