// The `tlmc lm` pipeline: a second run goes on from where the first stopped (models already
// sampled are not sampled again; training resumes at its checkpoint's step; measurements
// recorded count), held-out workloads never reach the corpus, and the written models load.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ir/target.h"
#include "ir/te_text.h"
#include "lm/checkpoint.h"
#include "lm/lineage.h"
#include "lm/sentence_file.h"
#include "lm/tensor_sentence.h"
#include "scheduler/sketch_rules.h"
#include "scheduler/tuning_db.h"
#include "support/test_support.h"

namespace tlmc {
namespace {

using test::run_command;

const std::string kExamples = std::string(TLMC_SOURCE_DIR) + "/examples/";

size_t count_lines(const std::string& path) {
  std::ifstream f(path);
  size_t n = 0;
  for (std::string line; std::getline(f, line);) ++n;
  return n;
}

std::string tlmc_lm(const std::string& args) {
  return std::string(TLMC_EXE) + " lm " + args + " 2>&1";
}

TEST(LmPipeline, SamplingResumesAndHoldsOutTheListedWorkloads) {
  test::TempDir dir;
  const std::string corpus = dir.file("corpus");
  // The first run samples the MLP only.
  test::CommandResult first = run_command(tlmc_lm(
      "sample " + corpus + " " + kExamples + "mlp.yaml --per-subgraph 3 --target x86-64-avx2"));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const std::string mlp_keys = test::read_file(corpus + "/sentences/mlp.x86-64-avx2.keys");
  ASSERT_FALSE(mlp_keys.empty());
  // Hold out the transformer's first subgraph (as a first run lists it), then sample both.
  test::CommandResult probe =
      run_command(tlmc_lm("sample " + dir.file("probe") + " " + kExamples +
                          "transformer_layer.yaml --per-subgraph 1 --target x86-64-avx2"));
  ASSERT_EQ(probe.exit_code, 0) << probe.out;
  const std::string probe_keys =
      test::read_file(dir.file("probe") + "/sentences/transformer_layer.x86-64-avx2.keys");
  const std::string held = probe_keys.substr(0, probe_keys.find('\t'));
  test::write_file(dir.file("held_out.txt"), "# benchmark workloads\n" + held + "  W-something\n");
  test::CommandResult second = run_command(
      tlmc_lm("sample " + corpus + " " + kExamples + "mlp.yaml " + kExamples +
              "transformer_layer.yaml --per-subgraph 3 --target x86-64-avx2 --hold-out " +
              dir.file("held_out.txt")));
  ASSERT_EQ(second.exit_code, 0) << second.out;
  EXPECT_EQ(second.out.find("mlp.yaml:"), std::string::npos) << "sampled again: " << second.out;
  EXPECT_NE(second.out.find("(1 held out)"), std::string::npos) << second.out;
  const std::string keys =
      test::read_file(corpus + "/sentences/transformer_layer.x86-64-avx2.keys");
  EXPECT_EQ(keys.find(held), std::string::npos);
  EXPECT_EQ(test::read_file(corpus + "/sentences/mlp.x86-64-avx2.keys"), mlp_keys);
  // Three sentences per subgraph listed.
  const size_t listed = static_cast<size_t>(std::count(keys.begin(), keys.end(), '\n'));
  EXPECT_EQ(lm::read_sentences(corpus + "/sentences/transformer_layer.x86-64-avx2.bin").size(),
            3 * listed);
}

std::string conv_then_product(int batch, int size, bool relu) {
  const std::string b = std::to_string(batch), hw = std::to_string(size);
  return "tlmc: 1\nname: family\ninputs:\n  x: {shape: [" + b + ", 16, " + hw + ", " + hw +
         "]}\n  v: {shape: [" + b +
         ", 40]}\nweights:\n"
         "  w: {shape: [16, 16, 3, 3], init: {uniform: [-1, 1]}, seed: 1}\n"
         "  m: {shape: [40, 24], init: {uniform: [-1, 1]}, seed: 2}\n"
         "nodes:\n"
         "  - {op: Conv, inputs: [x, w], outputs: [" +
         (relu ? "c" : "y") + "], attrs: {pads: [1, 1, 1, 1]}}\n" +
         (relu ? "  - {op: Relu, inputs: [c], outputs: [y]}\n" : "") +
         "  - {op: MatMul, inputs: [v, m], outputs: [z]}\noutputs: [y, z]\n";
}

// A hold-out file as `tlmc lm keys` prints it holds out shape families, not only keys: the
// same convolution at another batch and image size, without its ReLU, in every layout plan,
// is not sampled; a "family" line holds out a family alone; the corpus's .keys name each
// sampled subgraph's family.
TEST(LmPipeline, HoldingOutAFamilyDropsItsSubgraphsAtEveryShape) {
  test::TempDir dir;
  test::write_file(dir.file("benchmark.yaml"), conv_then_product(1, 28, true));
  test::write_file(dir.file("near_copy.yaml"), conv_then_product(4, 20, false));
  const test::CommandResult keys = run_command(std::string(TLMC_EXE) + " lm keys --target " +
                                               "x86-64-avx2 " + dir.file("benchmark.yaml"));
  ASSERT_EQ(keys.exit_code, 0) << keys.out;
  const char* conv = "Conv cin=16 cout=16 kernel=3x3 stride=1x1 pads=1,1,1,1 dilation=1x1 groups=1";
  ASSERT_NE(keys.out.find(conv), std::string::npos) << keys.out;
  // Only the convolution's lines: the product stays in.
  std::string held;
  std::istringstream lines(keys.out);
  for (std::string line; std::getline(lines, line);)
    if (line.find("\tConv ") != std::string::npos) held += line + "\n";
  test::write_file(dir.file("held_out.txt"), held);
  const test::CommandResult r = run_command(
      tlmc_lm("sample " + dir.file("corpus") + " " + dir.file("near_copy.yaml") +
              " --per-subgraph 1 --target x86-64-avx2 --hold-out " + dir.file("held_out.txt")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string sampled =
      test::read_file(dir.file("corpus") + "/sentences/near_copy.x86-64-avx2.keys");
  EXPECT_EQ(sampled.find("Conv "), std::string::npos) << sampled;
  EXPECT_NE(sampled.find("\tMatMul k=40 n=24\n"), std::string::npos) << sampled;
  EXPECT_EQ(r.out.find("(0 held out)"), std::string::npos) << r.out;

  // "family FAMILY" alone: now the product goes too.
  test::write_file(dir.file("families.txt"), "# by hand\nfamily MatMul k=40 n=24\n" + held);
  const test::CommandResult both = run_command(
      tlmc_lm("sample " + dir.file("corpus2") + " " + dir.file("near_copy.yaml") +
              " --per-subgraph 1 --target x86-64-avx2 --hold-out " + dir.file("families.txt")));
  ASSERT_EQ(both.exit_code, 0) << both.out;
  const std::string rest =
      test::read_file(dir.file("corpus2") + "/sentences/near_copy.x86-64-avx2.keys");
  EXPECT_EQ(rest.find("MatMul k=40"), std::string::npos) << rest;
  EXPECT_EQ(rest.find("Conv "), std::string::npos) << rest;

  // A line that is neither is refused where it stands, before anything is sampled.
  test::write_file(dir.file("bad.txt"), "# fine\nConv cin=16\n");
  const test::CommandResult bad =
      run_command(tlmc_lm("sample " + dir.file("corpus3") + " " + dir.file("near_copy.yaml") +
                          " --target x86-64-avx2 --hold-out " + dir.file("bad.txt")));
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find(dir.file("bad.txt") + ":2:1: error: 'Conv' is no workload key"),
            std::string::npos)
      << bad.out;
  EXPECT_FALSE(
      std::filesystem::exists(dir.file("corpus3") + "/sentences/near_copy.x86-64-avx2.keys"));
}

// `tlmc lm overlap` reports what a corpus holds of a model: a near copy's subgraphs by
// family, the model's own by workload key, with the corpus model they came from.
TEST(LmPipeline, OverlapReportsSubgraphsTrainedOnByKeyAndByFamily) {
  test::TempDir dir;
  test::write_file(dir.file("benchmark.yaml"), conv_then_product(1, 28, true));
  test::write_file(dir.file("near_copy.yaml"), conv_then_product(4, 20, false));
  const std::string corpus = dir.file("corpus");
  ASSERT_EQ(run_command(tlmc_lm("sample " + corpus + " " + dir.file("near_copy.yaml") +
                                " --per-subgraph 1 --target x86-64-avx2"))
                .exit_code,
            0);
  const test::CommandResult near = run_command(tlmc_lm(
      "overlap " + dir.file("benchmark.yaml") + " --corpus " + corpus + " --target x86-64-avx2"));
  ASSERT_EQ(near.exit_code, 0) << near.out;
  EXPECT_NE(near.out.find("\tConv cin=16 cout=16 kernel=3x3 stride=1x1 pads=1,1,1,1 "
                          "dilation=1x1 groups=1\tfamily\t" +
                          std::filesystem::absolute(dir.file("near_copy.yaml")).string()),
            std::string::npos)
      << near.out;
  EXPECT_NE(near.out.find("\tMatMul k=40 n=24\tfamily\t"), std::string::npos) << near.out;
  EXPECT_EQ(near.out.find("\texact\t"), std::string::npos) << near.out;
  EXPECT_NE(near.out.find(" 0 trained on by workload key, "), std::string::npos) << near.out;

  const test::CommandResult own = run_command(tlmc_lm(
      "overlap " + dir.file("near_copy.yaml") + " --corpus " + corpus + " --target x86-64-avx2"));
  ASSERT_EQ(own.exit_code, 0) << own.out;
  EXPECT_NE(own.out.find("\tMatMul k=40 n=24\texact\t"), std::string::npos) << own.out;
  EXPECT_EQ(own.out.find("\tfamily\t"), std::string::npos) << own.out;
  EXPECT_NE(own.out.find(" 0 more by shape family"), std::string::npos) << own.out;

  // A tuning database's workloads: the product's record, its family from the corpus.
  std::string product_key;
  std::istringstream lines(test::read_file(corpus + "/sentences/near_copy.x86-64-avx2.keys"));
  for (std::string line; std::getline(lines, line);)
    if (line.find("\tMatMul ") != std::string::npos) product_key = line.substr(0, 16);
  ASSERT_EQ(product_key.size(), 16u);
  {
    scheduler::TuningRecord r;
    r.workload_key = product_key;
    r.target = "x86-64-avx2";
    r.schedule = "tlmc-schedule 1\n";
    r.seconds = 1e-6;
    r.measured_at = "2026-12-07T00:00:00Z";
    scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Write).add({r});
  }
  const test::CommandResult tuned =
      run_command(tlmc_lm("overlap " + dir.file("near_copy.yaml") + " --tuning-db " +
                          dir.file("t.db") + " --target x86-64-avx2"));
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  EXPECT_NE(tuned.out.find("\tMatMul k=40 n=24\texact\ttuning database " + dir.file("t.db")),
            std::string::npos)
      << tuned.out;
  EXPECT_NE(tuned.out.find(" 1 trained on by workload key, 0 more by shape family"),
            std::string::npos)
      << tuned.out;
  EXPECT_NE(tuned.out.find("# 1 of the 1 workloads trained on have no recorded family"),
            std::string::npos)
      << tuned.out;
  const test::CommandResult missing =
      run_command(tlmc_lm("overlap " + dir.file("near_copy.yaml") + " --tuning-db " +
                          dir.file("none.db") + " --target x86-64-avx2"));
  EXPECT_EQ(missing.exit_code, 1) << missing.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.db")));

  const test::CommandResult neither = run_command(tlmc_lm("overlap " + dir.file("benchmark.yaml")));
  EXPECT_NE(neither.exit_code, 0);
  EXPECT_NE(neither.out.find("needs what was trained on"), std::string::npos) << neither.out;
}

TEST(LmPipeline, AModelTlmcCannotReadIsListedWithItsReasonAndSamplingGoesOn) {
  test::TempDir dir;
  test::write_file(dir.file("odd.yaml"),
                   "tlmc: 1\nname: odd\ninputs:\n  x: {shape: [4]}\n"
                   "nodes:\n  - {op: NoSuchOp, inputs: [x], outputs: [y]}\noutputs: [y]\n");
  const std::string corpus = dir.file("corpus");
  const std::string cmd = tlmc_lm("sample " + corpus + " " + dir.file("odd.yaml") + " " +
                                  kExamples + "mlp.yaml --per-subgraph 2 --target x86-64-avx2");
  test::CommandResult r = run_command(cmd);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("odd.yaml: skipped:"), std::string::npos) << r.out;
  EXPECT_NE(test::read_file(corpus + "/sentences/odd.x86-64-avx2.skipped").find("NoSuchOp"),
            std::string::npos);
  EXPECT_FALSE(test::read_file(corpus + "/sentences/mlp.x86-64-avx2.keys").empty());
  test::CommandResult again = run_command(cmd);
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.out.find("skipped"), std::string::npos) << "tried again: " << again.out;
}

// The export script's models are ones tlmc reads: one small variant, exported and sampled.
TEST(LmPipeline, TheCorpusScriptExportsModelsThatSampleWithoutUnknownWords) {
  test::TempDir dir;
  const std::string script =
      "/usr/bin/python3 " + std::string(TLMC_SOURCE_DIR) + "/scripts/lm_corpus_models.py";
  test::CommandResult list = run_command(script + " --list 2>&1");
  ASSERT_EQ(list.exit_code, 0) << list.out;
  EXPECT_NE(list.out.find("gpt2_small_b1_s128 input_ids=1x128"), std::string::npos) << list.out;
  test::CommandResult exported =
      run_command(script + " --out " + dir.file("models") + " --only squeezenet1_1_b1_160 2>&1");
  ASSERT_EQ(exported.exit_code, 0) << exported.out;
  const std::string model = dir.file("models/squeezenet1_1_b1_160.onnx");
  test::CommandResult sampled =
      run_command(tlmc_lm("sample " + dir.file("corpus") + " " + model + " --per-subgraph 2"));
  ASSERT_EQ(sampled.exit_code, 0) << sampled.out;
  const std::vector<lm::Sentence> sentences = lm::read_sentences(
      dir.file("corpus/sentences/squeezenet1_1_b1_160." + ir::host_target().name + ".bin"));
  EXPECT_GT(sentences.size(), 20u);
  for (const lm::Sentence& s : sentences)
    EXPECT_EQ(std::count(s.tokens.begin(), s.tokens.end(), lm::Vocabulary::kUnk), 0)
        << lm::sentence_text(s.tokens);
}

// The synthetic models (scripts/lm_synthetic_models.py): the same files for the same seed,
// every one a graph tlmc reads, of many shape families, whose sentences use known words.
TEST(LmPipeline, TheSyntheticModelsScriptWritesModelsOfManyFamiliesThatSample) {
  test::TempDir dir;
  const std::string script = "/usr/bin/python3 " + std::string(TLMC_SOURCE_DIR) +
                             "/scripts/lm_synthetic_models.py --count 16 --seed 3 --out ";
  test::CommandResult first = run_command(script + dir.file("a") + " 2>&1");
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_NE(first.out.find("16 written, 0 there already"), std::string::npos) << first.out;
  test::CommandResult again = run_command(script + dir.file("a") + " 2>&1");
  EXPECT_NE(again.out.find("0 written, 16 there already"), std::string::npos) << again.out;
  ASSERT_EQ(run_command(script + dir.file("b") + " 2>&1").exit_code, 0);
  std::string models;
  for (int i = 0; i < 16; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "syn_3_%05d.yaml", i);
    EXPECT_EQ(test::read_file(dir.file("a/") + name), test::read_file(dir.file("b/") + name));
    models += " " + dir.file("a/") + name;
  }
  test::CommandResult keys = run_command(tlmc_lm("keys" + models));
  ASSERT_EQ(keys.exit_code, 0) << keys.out;
  std::set<std::string> families;
  std::istringstream lines(keys.out);
  for (std::string line; std::getline(lines, line);)
    families.insert(line.substr(line.rfind('\t') + 1));
  EXPECT_GE(families.size(), 12u) << keys.out;
  test::CommandResult sampled =
      run_command(tlmc_lm("sample " + dir.file("corpus") + models + " --per-subgraph 1"));
  ASSERT_EQ(sampled.exit_code, 0) << sampled.out;
  size_t sentences = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("corpus/sentences")))
    if (e.path().extension() == ".bin")
      for (const lm::Sentence& s : lm::read_sentences(e.path().string())) {
        ++sentences;
        EXPECT_EQ(std::count(s.tokens.begin(), s.tokens.end(), lm::Vocabulary::kUnk), 0)
            << lm::sentence_text(s.tokens);
      }
  EXPECT_GE(sentences, 16u);
}

TEST(LmPipeline, PretrainingResumesAtItsCheckpointAndWritesAModel) {
  test::TempDir dir;
  const std::string corpus = dir.file("corpus");
  ASSERT_EQ(run_command(tlmc_lm("sample " + corpus + " " + kExamples + "mlp.yaml --per-subgraph 4"))
                .exit_code,
            0);
  const std::string tiny = " --channels 16 --layers 1 --heads 2 --context 512 --batch 4 ";
  test::CommandResult first =
      run_command(tlmc_lm("pretrain " + corpus + tiny + "--steps 50 -o " + dir.file("a.tlm")));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_NE(first.out.find("step 50/50 loss"), std::string::npos) << first.out;
  // A longer run on the same corpus starts from the checkpoint's step.
  test::CommandResult second =
      run_command(tlmc_lm("pretrain " + corpus + tiny + "--steps 100 -o " + dir.file("b.tlm")));
  ASSERT_EQ(second.exit_code, 0) << second.out;
  EXPECT_NE(second.out.find("resuming at step 50"), std::string::npos) << second.out;
  EXPECT_EQ(second.out.find("step 50/100"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("step 100/100"), std::string::npos) << second.out;
  const lm::Checkpoint model = lm::load_checkpoint(dir.file("b.tlm"));
  EXPECT_EQ(model.model.config().channels, 16);
  EXPECT_FALSE(model.optimiser);
  // Another size against the same checkpoint is refused, and says what to do.
  test::CommandResult other = run_command(tlmc_lm(
      "pretrain " + corpus + " --channels 32 --heads 2 --layers 1 -o " + dir.file("c.tlm")));
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.out.find("a checkpoint of another model size: remove it to start over"),
            std::string::npos)
      << other.out;
}

// A round on one machine: the model's proposals for the corpus's subgraphs measured and
// recorded (resumable: a second run measures nothing), then fine-tuning on the fastest
// record of each (demonstrations), which writes a model -O1 compiles with.
TEST(LmPipeline, DemonstrationsAreMeasuredRecordedAndFineTunedOn) {
  if (!ir::host_target().runs_here) GTEST_SKIP() << "demonstrate measures on this machine";
  test::TempDir dir;
  const std::string corpus = dir.file("corpus");
  ASSERT_EQ(run_command(tlmc_lm("sample " + corpus + " " + kExamples + "mlp.yaml --per-subgraph 2"))
                .exit_code,
            0);
  const std::string db = " --tuning-db " + dir.file("t.db");
  const std::string demonstrate = "demonstrate " + corpus + db + " --subgraphs 2 --trials 3";
  test::CommandResult first = run_command(tlmc_lm(demonstrate));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_NE(first.out.find("[2/2]"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find(": 3 trials, best "), std::string::npos) << first.out;
  const size_t records =
      scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Read).all().size();
  EXPECT_EQ(records, 8u) << "two subgraphs, each its -O0 schedule and three proposals";
  test::CommandResult again = run_command(tlmc_lm(demonstrate));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Read).all().size(),
            records);
  // Round 2 adds three more to each.
  ASSERT_EQ(run_command(tlmc_lm(demonstrate + " --round 2")).exit_code, 0);
  EXPECT_EQ(scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Read).all().size(),
            records + 6);
  // Round 3 by -O3's search seeded by the model: three more each.
  test::CommandResult evolved =
      run_command(tlmc_lm(demonstrate + " --round 3 --search evolutionary"));
  ASSERT_EQ(evolved.exit_code, 0) << evolved.out;
  EXPECT_NE(evolved.out.find(": 9 trials, best "), std::string::npos) << evolved.out;
  EXPECT_EQ(scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Read).all().size(),
            records + 12);
  test::CommandResult unknown = run_command(tlmc_lm(demonstrate + " --search annealing"));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("--search takes model or evolutionary, not 'annealing'"),
            std::string::npos)
      << unknown.out;

  const std::string tiny = " --channels 16 --layers 1 --heads 2 --batch 4 ";
  ASSERT_EQ(run_command(tlmc_lm("pretrain " + corpus + tiny + "--steps 5 -o " + dir.file("p.tlm")))
                .exit_code,
            0);
  test::CommandResult tuned =
      run_command(tlmc_lm("finetune --from-db " + dir.file("t.db") + " --model " +
                          dir.file("p.tlm") + " --epochs 2 --batch 1 -o " + dir.file("f.tlm")));
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  EXPECT_NE(tuned.out.find("tlmc lm finetune: 2 demonstrations from 2 workload-target pairs"),
            std::string::npos)
      << tuned.out;
  EXPECT_NE(tuned.out.find("step 4/4"), std::string::npos) << tuned.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("f.tlm.ckpt"))) << "the checkpoint is removed";
  // A record whose point has a value its space no longer lists (tlmc's spaces changed since
  // it was measured) is left out and counted, never trained on or an error.
  std::filesystem::copy_file(dir.file("t.db"), dir.file("s.db"));
  {
    scheduler::TuningDb tdb =
        scheduler::TuningDb::open(dir.file("s.db"), scheduler::DbAccess::Write);
    std::vector<scheduler::TuningRecord> all = tdb.all();
    ASSERT_FALSE(all.empty());
    scheduler::TuningRecord stale = all[0];
    const size_t last_line = stale.schedule.rfind(' ', stale.schedule.size() - 2);
    stale.schedule = stale.schedule.substr(0, last_line + 1) + "4095\n";
    stale.seconds = 1e-9;  // the fastest of its workload: the one fine-tuning would take
    tdb.add({stale});
  }
  test::CommandResult stale =
      run_command(tlmc_lm("finetune --from-db " + dir.file("s.db") + " --model " +
                          dir.file("p.tlm") + " --epochs 1 --batch 1 -o " + dir.file("s.tlm")));
  ASSERT_EQ(stale.exit_code, 0) << stale.out;
  EXPECT_NE(stale.out.find("1 not a point of the spaces"), std::string::npos) << stale.out;
  // --min-gain: no proposal ran 1,000 times faster than the -O0 schedule, so the -O0
  // schedule is each workload's demonstration.
  test::CommandResult gain = run_command(
      tlmc_lm("finetune --from-db " + dir.file("t.db") + " --model " + dir.file("p.tlm") +
              " --epochs 1 --batch 1 --min-gain 1000 -o " + dir.file("g.tlm")));
  ASSERT_EQ(gain.exit_code, 0) << gain.out;
  EXPECT_NE(gain.out.find("2 demonstrations from 2 workload-target pairs of " + dir.file("t.db") +
                          " (2 of them the -O0 schedule, nothing 1000.00 times faster;"),
            std::string::npos)
      << gain.out;
  test::CommandResult no_gain = run_command(tlmc_lm("finetune --from-db " + dir.file("t.db") +
                                                    " --min-gain 0.5 -o " + dir.file("h.tlm")));
  EXPECT_EQ(no_gain.exit_code, 2) << no_gain.out;
  EXPECT_NE(no_gain.out.find("--min-gain takes a ratio >= 1 (1: the fastest record)"),
            std::string::npos)
      << no_gain.out;
  EXPECT_EQ(lm::load_checkpoint(dir.file("f.tlm")).model.config().channels, 16);
  // Rehearsal: sentences of subgraphs with no demonstration join the training, as many as
  // there are demonstrations. The host corpus's demonstrated subgraphs are not rehearsed;
  // another target's sentences of the same subgraphs are.
  const size_t host_subgraphs =
      count_lines(corpus + "/sentences/mlp." + ir::host_target().name + ".keys");
  const std::string other_target =
      ir::host_target().name == "x86-64-avx2" ? "x86-64-avx512" : "x86-64-avx2";
  // A second model with the same subgraphs adds nothing: its files are empty.
  std::filesystem::copy_file(kExamples + "mlp.yaml", dir.file("mlp_again.yaml"));
  ASSERT_EQ(run_command(tlmc_lm("sample " + dir.file("other") + " " + kExamples + "mlp.yaml " +
                                dir.file("mlp_again.yaml") + " --decisions rule --target " +
                                other_target))
                .exit_code,
            0);
  const std::string finetune = "finetune --from-db " + dir.file("t.db") + " --model " +
                               dir.file("p.tlm") + " --epochs 1 --batch 1 -o " + dir.file("r.tlm");
  test::CommandResult own = run_command(tlmc_lm(finetune + " --rehearse " + corpus));
  ASSERT_EQ(own.exit_code, 0) << own.out;
  EXPECT_NE(own.out.find("tlmc lm finetune: " +
                         std::to_string(std::min<size_t>(2, (host_subgraphs - 2) * 2)) +
                         " sentences of " + corpus + " rehearsed"),
            std::string::npos)
      << own.out;
  test::CommandResult other = run_command(tlmc_lm(finetune + " --rehearse " + dir.file("other")));
  ASSERT_EQ(other.exit_code, 0) << other.out;
  EXPECT_NE(other.out.find("tlmc lm finetune: 2 sentences of " + dir.file("other") + " rehearsed"),
            std::string::npos)
      << other.out;
  EXPECT_NE(other.out.find("step 4/4"), std::string::npos) << "2 demonstrations, 2 rehearsed";
  test::CommandResult o1 =
      run_command(std::string(TLMC_EXE) + " " + kExamples + "mlp.yaml -O1 --check --lm-model " +
                  dir.file("f.tlm") + " --tuning-db " + dir.file("none.db") + " 2>&1");
  EXPECT_EQ(o1.exit_code, 0) << o1.out;
  // A database without demonstrations, and a missing one, are refused with what to do.
  test::CommandResult missing =
      run_command(tlmc_lm("finetune --from-db " + dir.file("no.db") + " -o " + dir.file("g.tlm")));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find("no tuning database here (give one that -O2 or -O3 wrote)"),
            std::string::npos)
      << missing.out;
}

// pretrain and finetune write the model's lineage beside it (MODEL.tlm.lineage): the corpus's
// subgraphs, then each round's demonstrated and rehearsed ones, with their shape families,
// whose chained digest the model file keeps. finetune --hold-out leaves out a held-out
// family's demonstrations and rehearsals, and a workload whose family nothing tells.
TEST(LmPipeline, TrainingWritesItsLineageAndFinetuneHoldsOutFamilies) {
  if (!ir::host_target().runs_here) GTEST_SKIP() << "demonstrate measures on this machine";
  test::TempDir dir;
  const std::string corpus = dir.file("corpus");
  ASSERT_EQ(run_command(tlmc_lm("sample " + corpus + " " + kExamples + "mlp.yaml --per-subgraph 2"))
                .exit_code,
            0);
  std::map<std::string, std::string> sampled;  // key -> family, as the corpus lists them
  {
    std::ifstream keys(corpus + "/sentences/mlp." + ir::host_target().name + ".keys");
    for (std::string line; std::getline(keys, line);) {
      std::vector<std::string> fields;
      std::istringstream split(line);
      for (std::string f; std::getline(split, f, '\t');) fields.push_back(f);
      ASSERT_EQ(fields.size(), 4u) << line;
      sampled[fields[0]] = fields[3];
    }
  }
  ASSERT_GE(sampled.size(), 3u);
  const std::string tiny = " --channels 16 --layers 1 --heads 2 --batch 4 ";
  ASSERT_EQ(run_command(tlmc_lm("pretrain " + corpus + tiny + "--steps 3 -o " + dir.file("p.tlm")))
                .exit_code,
            0);
  const lm::Lineage pretrained = lm::read_lineage(dir.file("p.tlm.lineage"));
  ASSERT_EQ(pretrained.stages.size(), 1u);
  EXPECT_EQ(pretrained.stages[0].kind, "pretrain");
  EXPECT_EQ(pretrained.stages[0].keys, sampled);
  EXPECT_EQ(lm::load_checkpoint(dir.file("p.tlm")).lineage, lm::lineage_digest(pretrained));

  ASSERT_EQ(run_command(tlmc_lm("demonstrate " + corpus + " --tuning-db " + dir.file("t.db") +
                                " --model " + dir.file("p.tlm") + " --subgraphs 2 --trials 1"))
                .exit_code,
            0);
  std::vector<std::string> demonstrated;
  for (const scheduler::TuningSummary& w :
       scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Read).summary())
    demonstrated.push_back(w.workload_key);
  ASSERT_EQ(demonstrated.size(), 2u);
  const std::string finetune = "finetune --from-db " + dir.file("t.db") + " --epochs 1 --batch 1";
  test::CommandResult tuned =
      run_command(tlmc_lm(finetune + " --model " + dir.file("p.tlm") + " --rehearse " + corpus +
                          " -o " + dir.file("f.tlm")));
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  EXPECT_NE(tuned.out.find("wrote " + dir.file("f.tlm") + " and its lineage"), std::string::npos)
      << tuned.out;
  const lm::Lineage finetuned = lm::read_lineage(dir.file("f.tlm.lineage"));
  ASSERT_EQ(finetuned.stages.size(), 2u);
  EXPECT_EQ(finetuned.stages[0].keys, sampled);
  EXPECT_EQ(finetuned.stages[1].kind, "finetune");
  for (const std::string& key : demonstrated) EXPECT_TRUE(finetuned.stages[1].keys.count(key));
  EXPECT_GT(finetuned.stages[1].keys.size(), 2u) << "rehearsed subgraphs are listed too";
  for (const auto& [key, family] : finetuned.stages[1].keys) EXPECT_EQ(family, sampled[key]);
  EXPECT_EQ(lm::load_checkpoint(dir.file("f.tlm")).lineage, lm::lineage_digest(finetuned));

  // A round from f.tlm goes on from its lineage: three stages.
  ASSERT_EQ(
      run_command(tlmc_lm(finetune + " --model " + dir.file("f.tlm") + " -o " + dir.file("g.tlm")))
          .exit_code,
      0);
  EXPECT_EQ(lm::read_lineage(dir.file("g.tlm.lineage")).stages.size(), 3u);

  // Holding out the first demonstrated workload's family: none of that family is trained on.
  const std::string held_family = sampled[demonstrated[0]];
  test::write_file(dir.file("hold.txt"), "family " + held_family + "\n");
  test::CommandResult held =
      run_command(tlmc_lm(finetune + " --model " + dir.file("p.tlm") + " --rehearse " + corpus +
                          " --hold-out " + dir.file("hold.txt") + " -o " + dir.file("h.tlm")));
  ASSERT_EQ(held.exit_code, 0) << held.out;
  size_t of_family = 0;
  for (const std::string& key : demonstrated) of_family += sampled[key] == held_family;
  EXPECT_NE(held.out.find("left out: " + std::to_string(of_family) + " pairs held out"),
            std::string::npos)
      << held.out;
  const lm::Lineage held_lineage = lm::read_lineage(dir.file("h.tlm.lineage"));
  ASSERT_EQ(held_lineage.stages.size(), 2u);
  EXPECT_FALSE(held_lineage.stages[1].keys.empty());
  for (const auto& [key, family] : held_lineage.stages[1].keys) EXPECT_NE(family, held_family);

  // Without the lists that tell the workloads' families (no lineage beside the model, no
  // corpus), a hold-out of families leaves every workload out, and says why.
  std::filesystem::copy_file(dir.file("p.tlm"), dir.file("bare.tlm"));
  test::CommandResult blind =
      run_command(tlmc_lm(finetune + " --model " + dir.file("bare.tlm") + " --hold-out " +
                          dir.file("hold.txt") + " -o " + dir.file("b.tlm")));
  EXPECT_EQ(blind.exit_code, 1) << blind.out;
  EXPECT_NE(blind.out.find("2 workloads held out for want of their shape family"),
            std::string::npos)
      << blind.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("b.tlm")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("b.tlm.lineage")));
  // A lineage file that is not the model's is refused.
  std::filesystem::copy_file(dir.file("p.tlm.lineage"), dir.file("bare.tlm.lineage"));
  std::filesystem::copy_file(dir.file("f.tlm"), dir.file("bare.tlm"),
                             std::filesystem::copy_options::overwrite_existing);
  test::CommandResult stale = run_command(
      tlmc_lm(finetune + " --model " + dir.file("bare.tlm") + " -o " + dir.file("s.tlm")));
  EXPECT_EQ(stale.exit_code, 1) << stale.out;
  EXPECT_NE(stale.out.find(dir.file("bare.tlm.lineage") +
                           ": error: is the lineage of another "
                           "model than " +
                           dir.file("bare.tlm")),
            std::string::npos)
      << stale.out;
}

// --precision bf16: keys and sample take the subgraphs whose products read bfloat16 (a target
// with AMX: the tile unit's spaces, tensorize among them), in files of their own; fine-tuning
// on their records grows a model of the first CPU words to those it lacked (tensorize), and reads
// each record as a point of the AMX spaces although the target's descriptor does not name
// the unit.
TEST(LmPipeline, ProductsInBfloat16AreSampledAndFineTunedOn) {
  test::TempDir dir;
  const std::string corpus = dir.file("corpus");
  const std::string amx = " --target x86-64-amx --precision bf16";
  test::CommandResult sampled = run_command(
      tlmc_lm("sample " + corpus + " " + kExamples + "mlp.yaml --decisions rule" + amx));
  ASSERT_EQ(sampled.exit_code, 0) << sampled.out;
  const std::string stem = corpus + "/sentences/mlp+bf16.x86-64-amx";
  std::vector<std::string> keys;
  {
    std::ifstream f(stem + ".keys");
    for (std::string line; std::getline(f, line);) keys.push_back(line.substr(0, 16));
  }
  ASSERT_FALSE(keys.empty());
  const std::vector<lm::Sentence> sentences = lm::read_sentences(stem + ".bin");
  ASSERT_EQ(sentences.size(), keys.size());
  const ir::Target target = *ir::parse_target("x86-64-amx");
  size_t tiled = 0;
  std::vector<scheduler::TuningRecord> records;
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string text = test::read_file(corpus + "/programs/" + keys[i] + ".te");
    const ir::TeProgram program = ir::te_from_text(text);
    if (lm::sentence_text(sentences[i].tokens).find("tensorize") != std::string::npos) {
      ++tiled;
      EXPECT_NE(text.find("bfloat16"), std::string::npos) << text;
    }
    const scheduler::Sketches sketches = scheduler::generate_sketches(program, target);
    scheduler::TuningRecord r;
    r.workload_key = keys[i];
    r.target = target.descriptor();
    r.schedule = scheduler::space_schedule_text(
        sketches, scheduler::SpacePoint{0, scheduler::default_values(sketches[0])});
    r.seconds = 1e-5;
    r.measured_at = "2026-11-28T10:00:00Z";
    r.workload = text;
    // The descriptor read back names no bf16 unit: there the tile unit's points are none.
    if (lm::sentence_text(sentences[i].tokens).find("tensorize") != std::string::npos) {
      EXPECT_FALSE(scheduler::listed_space_point(
          scheduler::generate_sketches(program, *ir::parse_descriptor(r.target)), r.schedule));
    }
    records.push_back(r);
  }
  EXPECT_GT(tiled, 0u) << "the MLP's products take the tile unit";
  // The float32 keys differ: the products' operands are other tensors.
  test::CommandResult fp32 =
      run_command(tlmc_lm("keys " + kExamples + "mlp.yaml --target x86-64-amx"));
  test::CommandResult bf16 = run_command(tlmc_lm("keys " + kExamples + "mlp.yaml" + amx));
  ASSERT_EQ(fp32.exit_code, 0) << fp32.out;
  ASSERT_EQ(bf16.exit_code, 0) << bf16.out;
  EXPECT_NE(bf16.out.find(keys[0]), std::string::npos) << bf16.out;
  EXPECT_EQ(fp32.out.find(keys[0]), std::string::npos) << fp32.out;

  {
    scheduler::TuningDb db =
        scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Write);
    db.add(records);
  }
  // A model that knows the CPU words of the first bundled models only (4,305), as the
  // bundled one did before it was grown: fine-tuning grows it.
  const lm::GptConfig older{static_cast<int>(lm::Vocabulary::get().cpu_size()), 768, 16, 1, 2};
  lm::save_checkpoint(dir.file("old.tlm"), lm::Gpt(older, 3));
  test::CommandResult tuned =
      run_command(tlmc_lm("finetune --from-db " + dir.file("t.db") + " --model " +
                          dir.file("old.tlm") + " --epochs 1 --batch 4 -o " + dir.file("f.tlm")));
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  EXPECT_NE(tuned.out.find("the model knew " + std::to_string(lm::Vocabulary::get().cpu_size()) +
                           " of the language's " + std::to_string(lm::Vocabulary::get().size()) +
                           " tokens"),
            std::string::npos)
      << tuned.out;
  EXPECT_NE(tuned.out.find(std::to_string(keys.size()) + " demonstrations from " +
                           std::to_string(keys.size()) + " workload-target pairs"),
            std::string::npos)
      << tuned.out;
  EXPECT_NE(tuned.out.find("0 not a point of the spaces"), std::string::npos) << tuned.out;
  const lm::Gpt model = lm::load_checkpoint(dir.file("f.tlm")).model;
  EXPECT_EQ(model.config().vocab, static_cast<int>(lm::Vocabulary::get().size()));
  EXPECT_FALSE(model.config().cuda);
  EXPECT_EQ(model.known_token(lm::Vocabulary::get().at("tensorize")),
            lm::Vocabulary::get().at("tensorize"));
  // --rehearse-count: that many rule sentences of subgraphs without a demonstration (the
  // transformer's, the MLP's all have one) join the training: imitation of the corpus.
  ASSERT_EQ(run_command(tlmc_lm("sample " + corpus + " " + kExamples +
                                "transformer_layer.yaml --decisions rule" + amx))
                .exit_code,
            0);
  const std::string finetune =
      "finetune --from-db " + dir.file("t.db") + " --epochs 1 --batch 4 -o " + dir.file("r.tlm");
  test::CommandResult imitated =
      run_command(tlmc_lm(finetune + " --rehearse " + corpus + " --rehearse-count 3"));
  ASSERT_EQ(imitated.exit_code, 0) << imitated.out;
  EXPECT_NE(imitated.out.find("tlmc lm finetune: 3 sentences of " + corpus + " rehearsed"),
            std::string::npos)
      << imitated.out;
  test::CommandResult alone = run_command(tlmc_lm(finetune + " --rehearse-count 3"));
  EXPECT_EQ(alone.exit_code, 2) << alone.out;
  EXPECT_NE(alone.out.find("--rehearse-count goes with --rehearse CORPUS"), std::string::npos)
      << alone.out;

  // A target without a bf16 unit is refused.
  test::CommandResult avx2 = run_command(tlmc_lm("sample " + dir.file("c2") + " " + kExamples +
                                                 "mlp.yaml --target x86-64-avx2 --precision bf16"));
  EXPECT_EQ(avx2.exit_code, 2) << avx2.out;
  EXPECT_NE(avx2.out.find("--precision bf16 needs a CPU target with AVX512_BF16 or AMX "
                          "(x86-64-avx2 has neither)"),
            std::string::npos)
      << avx2.out;
}

// What --draw by-kind must give: the operator of the stage with the most iterations, and
// how many of its reduction axes are longer than one.
std::string kind_of(const ir::TeProgram& program) {
  const ir::Stage* heaviest = nullptr;
  double most = -1;
  for (const ir::Stage& s : program.stages) {
    double n = 1;
    for (const ir::Axis& a : s.axes) n *= static_cast<double>(a.extent);
    for (const ir::Axis& a : s.reduce_axes) n *= static_cast<double>(a.extent);
    if (n > most) {
      most = n;
      heaviest = &s;
    }
  }
  int longer = 0;
  for (const ir::Axis& a : heaviest->reduce_axes) longer += a.extent > 1;
  return heaviest->op + "/" + std::to_string(longer);
}

// --draw by-kind: a round of as many subgraphs as the corpus has kinds demonstrates one of
// each kind (where the corpus has many more of one kind than of the others).
TEST(LmPipeline, DrawingByKindTakesEachKindOfSubgraphInTurn) {
  if (!ir::host_target().runs_here) GTEST_SKIP() << "demonstrate measures on this machine";
  test::TempDir dir;
  const std::string corpus = dir.file("corpus");
  ASSERT_EQ(run_command(tlmc_lm("sample " + corpus + " " + kExamples + "resnet_block.yaml " +
                                kExamples + "mlp.yaml --decisions rule"))
                .exit_code,
            0);
  std::map<std::string, int> kinds;
  for (const auto& entry : std::filesystem::directory_iterator(corpus + "/programs"))
    ++kinds[kind_of(ir::te_from_text(test::read_file(entry.path().string())))];
  // The block's 3x3 and 1x1 convolutions, the perceptron's matrix products.
  for (const char* kind : {"conv/3", "conv/1", "matmul/1"}) EXPECT_TRUE(kinds.count(kind)) << kind;
  ASSERT_GT(std::max_element(kinds.begin(), kinds.end(),
                             [](const auto& a, const auto& b) { return a.second < b.second; })
                ->second,
            1)
      << "one kind has several subgraphs";
  test::CommandResult drawn = run_command(
      tlmc_lm("demonstrate " + corpus + " --tuning-db " + dir.file("t.db") + " --subgraphs " +
              std::to_string(kinds.size()) + " --trials 1 --draw by-kind"));
  ASSERT_EQ(drawn.exit_code, 0) << drawn.out;
  std::set<std::string> seen;
  std::istringstream lines(drawn.out);
  for (std::string line; std::getline(lines, line);) {
    const size_t at = line.find("] ");
    if (line.rfind("tlmc lm demonstrate: [", 0) != 0 || at == std::string::npos) continue;
    const std::string key = line.substr(at + 2, line.find(':', at) - at - 2);
    EXPECT_TRUE(
        seen.insert(kind_of(ir::te_from_text(test::read_file(corpus + "/programs/" + key + ".te"))))
            .second)
        << "a second subgraph of one kind: " << line;
  }
  EXPECT_EQ(seen.size(), kinds.size()) << drawn.out;
  test::CommandResult bad = run_command(
      tlmc_lm("demonstrate " + corpus + " --tuning-db " + dir.file("t.db") + " --draw heaviest"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--draw takes uniform or by-kind, not 'heaviest'"), std::string::npos)
      << bad.out;
}

// --decisions rule: one sentence per subgraph, whose decisions are the -O0 rule's point.
TEST(LmPipeline, RuleSentencesHoldTheDefaultPoint) {
  test::TempDir dir;
  const std::string corpus = dir.file("corpus");
  test::CommandResult sampled = run_command(tlmc_lm(
      "sample " + corpus + " " + kExamples + "mlp.yaml --decisions rule --target x86-64-avx2"));
  ASSERT_EQ(sampled.exit_code, 0) << sampled.out;
  const std::string stem = corpus + "/sentences/mlp.x86-64-avx2";
  const std::vector<lm::Sentence> sentences = lm::read_sentences(stem + ".bin");
  std::ifstream keys(stem + ".keys");
  std::vector<std::string> key_lines;
  for (std::string line; std::getline(keys, line);) key_lines.push_back(line.substr(0, 16));
  ASSERT_EQ(sentences.size(), key_lines.size());
  ASSERT_FALSE(sentences.empty());
  const ir::Target target = *ir::parse_target("x86-64-avx2");
  for (size_t i = 0; i < sentences.size(); ++i) {
    const ir::TeProgram program =
        ir::te_from_text(test::read_file(corpus + "/programs/" + key_lines[i] + ".te"));
    const scheduler::Sketches sketches = scheduler::generate_sketches(program, target);
    const std::vector<lm::Token> prompt = lm::prompt_tokens(program, target);
    const lm::Sentence rule = lm::tensor_sentence(
        prompt, sketches, scheduler::SpacePoint{0, scheduler::default_values(sketches[0])});
    EXPECT_EQ(sentences[i].tokens, rule.tokens) << key_lines[i];
  }
  test::CommandResult both = run_command(tlmc_lm("sample " + dir.file("c2") + " " + kExamples +
                                                 "mlp.yaml --decisions rule --per-subgraph 3"));
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.out.find("--decisions rule writes one sentence per subgraph: leave out "
                          "--per-subgraph"),
            std::string::npos)
      << both.out;
  test::CommandResult bad = run_command(
      tlmc_lm("sample " + dir.file("c3") + " " + kExamples + "mlp.yaml --decisions best"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--decisions takes uniform, rule or estimate, not 'best'"),
            std::string::npos)
      << bad.out;
}

TEST(LmPipeline, BadUsageAndBadFilesAreReported) {
  test::TempDir dir;
  test::CommandResult none =
      run_command(tlmc_lm("pretrain " + dir.path() + " -o " + dir.file("m.tlm")));
  EXPECT_EQ(none.exit_code, 1) << none.out;
  EXPECT_NE(
      none.out.find(
          "sentences: error: no sentences: run `tlmc lm sample` with this corpus folder first"),
      std::string::npos)
      << none.out;
  test::CommandResult usage = run_command(tlmc_lm("sample " + dir.path()));
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.out.find("tlmc lm sample needs models to sample"), std::string::npos)
      << usage.out;
  std::filesystem::create_directories(dir.file("corpus/sentences"));
  test::write_file(dir.file("corpus/sentences/x.bin"), "not sentences");
  test::CommandResult bad =
      run_command(tlmc_lm("pretrain " + dir.file("corpus") + " -o " + dir.file("m.tlm")));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("x.bin: not a tlmc sentence file"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace tlmc
