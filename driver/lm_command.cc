#include "driver/lm_command.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "driver/compile.h"
#include "driver/layout_plans.h"
#include "driver/lm_keys.h"
#include "driver/lm_verifier.h"
#include "driver/output_files.h"
#include "driver/recorded_spaces.h"
#include "driver/subcommand_words.h"
#include "frontend/fold_constants.h"
#include "frontend/reduced_precision.h"
#include "ir/diagnostic.h"
#include "ir/normalised_key.h"
#include "ir/te_text.h"
#include "lm/checkpoint.h"
#include "lm/default_model.h"
#include "lm/lineage.h"
#include "lm/sentence_file.h"
#include "lm/tensor_sentence.h"
#include "lm/train.h"
#include "scheduler/sketch_rules.h"
#include "scheduler/tuning_db.h"
#include "tune/gpu_estimate_search.h"
#include "tune/measure_task.h"
#include "tune/schedule_choice.h"
#include "tune/tuner.h"

namespace tlmc::driver {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "Usage: tlmc lm keys MODEL... [--target T] [--precision fp32|bf16]\n"
    "       tlmc lm overlap MODEL... [--corpus CORPUS] [--tuning-db FILE] [--lineage FILE]\n"
    "                                     [--target T] [--precision fp32|bf16]\n"
    "       tlmc lm sample CORPUS MODEL... [--per-subgraph N]\n"
    "                                     [--decisions uniform|rule|estimate]\n"
    "                                     [--seed S] [--target T] [--hold-out FILE]\n"
    "                                     [--precision fp32|bf16]\n"
    "       tlmc lm pretrain CORPUS -o MODEL.tlm [--steps N] [--batch B] [--learning-rate R]\n"
    "                                     [--channels C] [--layers L] [--heads H] [--context T]\n"
    "                                     [--seed S]\n"
    "       tlmc lm demonstrate CORPUS --tuning-db FILE [--model M.tlm] [--subgraphs N]\n"
    "                                     [--draw uniform|by-kind] [--trials T] [--round R]\n"
    "                                     [--search model|evolutionary] [--seed S]\n"
    "       tlmc lm finetune --from-db FILE -o MODEL.tlm [--model M.tlm] [--top K] [--epochs E]\n"
    "                                     [--min-gain G] [--rehearse CORPUS [--rehearse-count N]]\n"
    "                                     [--hold-out FILE] [--batch B]\n"
    "                                     [--learning-rate R] [--seed S]\n"
    "       tlmc lm verifier DB... -o FILE.tsm [--corpus CORPUS] [--hold-out FILE]\n"
    "                                     [--folds K] [--drafts N] [--max-slower S]\n\n"
    "The tensor language model's pipeline (docs/lm.md). CORPUS is a folder the commands\n"
    "keep their work in; each command resumes where a killed run of it stopped.\n"
    "  keys      prints the workload key of each distinct subgraph of each MODEL (all layout\n"
    "            plans), its model, plan and normalised key (its shape family), tab-separated:\n"
    "            a --hold-out file\n"
    "  overlap   each distinct subgraph of each MODEL that CORPUS sampled, the tuning\n"
    "            database holds or a model's lineage file lists (what a model trained on them\n"
    "            saw), by workload key (exact) or by shape family (family), and a count per\n"
    "            MODEL\n"
    "  sample    the distinct subgraphs of each MODEL (.yaml or .onnx), except those whose\n"
    "            workload key or shape family --hold-out lists (lines as keys prints them,\n"
    "            or 'family NORMALISED KEY'), each written as N sentences whose decisions\n"
    "            are drawn at random from its spaces (CORPUS/sentences/), or as the one\n"
    "            point the -O0 rule chooses (--decisions rule) or, for a CUDA target, the\n"
    "            analytic model's best of the 32 points -O2 ranks (--decisions estimate),\n"
    "            and the subgraph itself (CORPUS/programs/)\n"
    "            keys and sample take the subgraphs --precision bf16 compiles with it (the\n"
    "            products' operands in bfloat16; a target with AVX512_BF16 or AMX)\n"
    "  pretrain  trains a model on CORPUS's sentences (checkpoints in CORPUS/pretrain.ckpt)\n"
    "            and writes it to MODEL.tlm (default: 128 channels, 4 layers, 4 heads, a\n"
    "            context of 768 tokens, 2000 steps of 16 sentences at a rate of 1e-3)\n"
    "  demonstrate  measures the model's proposals for N subgraphs of CORPUS (default 100,\n"
    "            drawn by the seed; --draw by-kind takes each kind of subgraph in turn) on\n"
    "            this machine, until each has R x T measurements (default T 32, R 1) in the\n"
    "            tuning database; --search evolutionary runs -O3's search seeded by the model\n"
    "            instead\n"
    "  finetune  trains the model (default: the bundled one), grown to every word of the\n"
    "            language (those it lacked start as <unk>), for E epochs (default 8) on the\n"
    "            fastest K records (default 1) of each workload in the tuning database, as\n"
    "            sentences (demonstrations), at a rate of 3e-4 unless told; checkpoints in\n"
    "            MODEL.tlm.ckpt. --min-gain G takes only records G times faster than the\n"
    "            workload's -O0 record, and the -O0 schedule where there is none. --rehearse\n"
    "            adds as many sentences of CORPUS's other subgraphs (N of them if given), so\n"
    "            that the model keeps what it knew of them, or imitates a corpus of rule\n"
    "            sentences where it knew nothing. --hold-out leaves out the workloads it\n"
    "            holds, by key or by family (one of unknown family too, where it names\n"
    "            families)\n"
    "  verifier  trains the speedup model that checks -O1's drafts (tune/speedup_model.h) on\n"
    "            the tuning databases' records, each paired with its workload's -O0 record;\n"
    "            chooses -O1's threshold by K-fold cross-validation over shape families\n"
    "            (default 5; families from CORPUS's listing, else each workload its own): the\n"
    "            smallest at which -O1, choosing among N records drawn as drafts (default 4),\n"
    "            is slower than -O0 by more than 3% on at most a share S of them (default\n"
    "            0.01); prints the table and writes FILE.tsm and FILE.tsm.lineage.\n"
    "            --hold-out as for finetune\n"
    "pretrain and finetune write MODEL.tlm.lineage beside the model: the workload keys and\n"
    "shape families of every stage it was trained on, whose digest the model file keeps.\n";

// The marker of a sentence file's stem whose model's products are in bfloat16 (no model's
// name has a '+' once made safe).
constexpr std::string_view kBf16Marker = "+bf16";

// The file a model's sentences go to: its name and the target's, made safe, with kBf16Marker
// between them when its products are in bfloat16.
std::string sentence_stem(const std::string& model, const ir::Target& target, bool bf16) {
  std::string stem = fs::path(model).stem().string() + "." + target.name;
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  if (bf16) stem.insert(stem.size() - target.name.size() - 1, kBf16Marker);
  return stem;
}

std::set<std::string> read_keys(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Diagnostic({path}, "cannot read the workload keys file");
  std::set<std::string> keys;
  std::string line;
  while (std::getline(f, line)) {
    const std::string key = line.substr(0, line.find_first_of(" \t#"));
    if (!key.empty()) keys.insert(key);
  }
  return keys;
}

// Where the corpus keeps a subgraph's program (ir/te_text.h), by workload key.
std::string program_path(const fs::path& corpus, const std::string& key) {
  return (corpus / "programs" / (key + ".te")).string();
}

// What `sample` writes as a subgraph's decisions.
enum class SampledDecisions {
  Uniform,   // points drawn uniformly from the spaces
  Rule,      // the -O0 rule's point (one per subgraph): what the rule would choose
  Estimate,  // a CUDA target's: the analytic model's best of the -O0 point and 31 uniform
             // draws (one per subgraph, tune/gpu_estimate_search.h; -O2 ranks the CUDA
             // model's proposals too): its preference, nothing measured
};

// The one point a subgraph's sentence writes for Rule and Estimate.
scheduler::SpacePoint chosen_point(SampledDecisions decisions, const ir::TeProgram& program,
                                   const scheduler::Sketches& sketches, const ir::Target& target,
                                   const std::string& key) {
  if (decisions == SampledDecisions::Rule)
    return scheduler::SpacePoint{0, scheduler::default_values(sketches[0])};
  return tune::choose_by_estimate(program, target, sketches, tune::estimated_candidates(2),
                                  std::stoull(key, nullptr, 16))
      .point;
}

// Each model: its distinct subgraphs (all layout plans) not held out and not sampled from an
// earlier model, `per_subgraph` points each. A model is done once its sentences file
// exists; its keys file, written first, lists the subgraphs it sampled (the corpus listing
// the held-out check reads), each with its model's absolute path (demonstrate reads it).
int sample(const fs::path& corpus, const std::vector<std::string>& models, int per_subgraph,
           SampledDecisions decisions, uint64_t seed, const ir::Target& target, bool bf16,
           const HeldOut& held_out) {
  fs::create_directories(corpus / "sentences");
  fs::create_directories(corpus / "programs");
  std::set<std::string> sampled;
  // A model's files: its sentences (".bin"), subgraph keys (".keys") or reason (".skipped").
  auto file = [&](const std::string& model, const char* extension) {
    return (corpus / "sentences" / (sentence_stem(model, target, bf16) + extension)).string();
  };
  for (const std::string& model : models)
    if (fs::exists(file(model, ".bin"))) {
      const std::set<std::string> keys = read_keys(file(model, ".keys"));
      sampled.insert(keys.begin(), keys.end());
    }
  size_t index = 0;
  for (const std::string& model : models) {
    ++index;
    if (fs::exists(file(model, ".bin")) || fs::exists(file(model, ".skipped"))) continue;
    const auto t0 = std::chrono::steady_clock::now();
    SplitModel split;
    try {
      split = split_model_file(model, target, bf16);
    } catch (const Diagnostic& d) {
      // A model tlmc cannot read (an operator it lacks, say) is listed with the reason, and
      // the corpus goes on without it; remove the .skipped file to try it again.
      replace_file(file(model, ".skipped"), d.format() + "\n", "the file");
      std::fprintf(stderr, "tlmc lm sample: [%zu/%zu] %s: skipped: %s\n", index, models.size(),
                   model.c_str(), d.format().c_str());
      continue;
    }
    std::string keys;
    std::vector<lm::Sentence> sentences;
    size_t skipped_held_out = 0;
    for (const Distinct& d : split.distinct) {
      const std::string family =
          ir::normalised_key(split.plans[static_cast<size_t>(d.plan)].graph, d.nodes);
      if (held_out.holds(d.key, family)) {
        ++skipped_held_out;
        continue;
      }
      if (!sampled.insert(d.key).second) continue;
      const ir::TeProgram& program = d.lowered.program;
      const scheduler::Sketches sketches = scheduler::generate_sketches(program, target);
      const std::vector<lm::Token> prompt = lm::prompt_tokens(program, target);
      std::mt19937_64 rng(seed ^ std::stoull(d.key, nullptr, 16));
      for (int i = 0; i < per_subgraph; ++i)
        sentences.push_back(
            lm::tensor_sentence(prompt, sketches,
                                decisions == SampledDecisions::Uniform
                                    ? scheduler::random_point(sketches, rng)
                                    : chosen_point(decisions, program, sketches, target, d.key)));
      replace_file(program_path(corpus, d.key), ir::te_to_text(program), "the file");
      keys += d.key + "\t" + fs::absolute(model).string() + "\t" +
              split.plans[static_cast<size_t>(d.plan)].name + "\t" + family + "\n";
    }
    replace_file(file(model, ".keys"), keys, "the file");
    lm::write_sentences(file(model, ".bin"), sentences);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(
        stderr,
        "tlmc lm sample: [%zu/%zu] %s: %zu subgraphs, %zu sentences (%zu held out) in %.1f s\n",
        index, models.size(), model.c_str(), sentences.size() / std::max(1, per_subgraph),
        sentences.size(), skipped_held_out, seconds);
  }
  return 0;
}

// What a training run needs beyond its sentences: the step count, batch, rate and the file
// it checkpoints to (resumed from when it exists: the same batches as an uninterrupted run).
struct TrainRun {
  const char* verb;  // "pretrain", "finetune": for progress lines
  int64_t steps = 0;
  int batch = 16;
  float learning_rate = 1e-3f;
  uint64_t seed = 1;
  std::string checkpoint;
};

// Trains `model` on `sentences` (sorted by the caller, so the run does not depend on file
// order), resuming from run.checkpoint.
void train(lm::Gpt& model, const std::vector<lm::Sentence>& sentences, const TrainRun& run) {
  // A model knows the language's first tokens (lm/vocabulary.h): one trained before the CUDA
  // words existed cannot learn to choose CUDA sketches.
  for (const lm::Sentence& x : sentences)
    for (const std::vector<lm::Token>& choice : x.choices)
      for (lm::Token t : choice)
        if (!model.known_words().has(t))
          throw Diagnostic({}, std::string("tlmc lm ") + run.verb +
                                   ": the sentences choose among words the model does not "
                                   "know (CUDA schedules, a model of CPU ones): start from a "
                                   "model that `tlmc lm pretrain` wrote");
  lm::AdamWOptions adam;
  adam.learning_rate = run.learning_rate;
  adam.total_steps = run.steps;
  adam.warmup_steps = std::min<int64_t>(100, run.steps / 10 + 1);
  lm::AdamWState state;
  if (fs::exists(run.checkpoint)) {
    lm::Checkpoint c = lm::load_checkpoint(run.checkpoint);
    if (!(c.model.config() == model.config()) || !c.optimiser)
      throw Diagnostic({run.checkpoint},
                       "a checkpoint of another model size: remove it to start over");
    model = std::move(c.model);
    state = std::move(*c.optimiser);
    std::fprintf(stderr, "tlmc lm %s: resuming at step %lld\n", run.verb,
                 static_cast<long long>(state.step));
  }
  const size_t batch = static_cast<size_t>(run.batch);
  const size_t per_epoch = sentences.size() / batch + (sentences.size() % batch != 0);
  std::vector<size_t> lengths;
  for (const lm::Sentence& x : sentences) lengths.push_back(x.tokens.size());
  std::vector<std::vector<size_t>> batches;
  int64_t batches_epoch = -1;
  auto t0 = std::chrono::steady_clock::now();
  size_t tokens = 0;
  float loss_sum = 0;
  int loss_count = 0;
  // An epoch's batches depend on the seed and the epoch alone: a resumed run draws the
  // batches the uninterrupted one would have.
  while (state.step < run.steps) {
    const int64_t epoch = state.step / static_cast<int64_t>(per_epoch);
    if (epoch != batches_epoch) {
      batches = lm::epoch_batches(lengths, batch, run.seed, epoch);
      batches_epoch = epoch;
    }
    std::vector<const lm::Sentence*> rows;
    for (size_t i : batches[static_cast<size_t>(state.step % static_cast<int64_t>(per_epoch))]) {
      rows.push_back(&sentences[i]);
      tokens += sentences[i].tokens.size();
    }
    const lm::Batch b = lm::make_batch(rows);
    model.zero_gradients();
    loss_sum += model.forward(b);
    ++loss_count;
    model.backward();
    lm::adamw_step(model, state, adam);
    if (state.step % 50 == 0 || state.step == run.steps) {
      lm::save_checkpoint(run.checkpoint, model, &state);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "tlmc lm %s: step %lld/%lld loss %.4f lr %.2e %.0f tokens/s\n", run.verb,
                   static_cast<long long>(state.step), static_cast<long long>(run.steps),
                   loss_sum / loss_count, lm::learning_rate_at(adam, state.step - 1), tokens / s);
      t0 = std::chrono::steady_clock::now();
      tokens = 0;
      loss_sum = 0;
      loss_count = 0;
    }
  }
}

void sort_sentences(std::vector<lm::Sentence>& sentences) {
  std::sort(sentences.begin(), sentences.end(),
            [](const lm::Sentence& a, const lm::Sentence& b) { return a.tokens < b.tokens; });
}

// A trained model's file and its lineage beside it (MODEL.lineage), the lineage first: the
// model file is written last, when both are whole.
void save_with_lineage(const std::string& output, const lm::Gpt& model,
                       const lm::Lineage& lineage) {
  lm::write_lineage(output + ".lineage", lineage);
  lm::save_checkpoint(output, model, nullptr, lm::lineage_digest(lineage));
}

// What a model file says of its lineage: the lineage file beside it (MODEL.lineage) when its
// digest is the model's; else the model's digest alone (its lists are not at hand); for a
// model written before lineages were kept, a digest of its parameters stands for it.
lm::Lineage lineage_of(const std::string& path, const lm::Checkpoint& c) {
  const std::string file = path + ".lineage";
  if (c.lineage.empty() || !fs::exists(file))
    return lm::unlisted_lineage(c.lineage, c.model.parameters());
  lm::Lineage out = lm::read_lineage(file);
  if (lm::lineage_digest(out) != c.lineage)
    throw Diagnostic({file}, "is the lineage of another model than " + path + " (digest " +
                                 lm::lineage_digest(out) + ", the model's " + c.lineage +
                                 "): it was trained again; remove the stale file");
  return out;
}

int pretrain(const fs::path& corpus, const std::string& output, const lm::GptConfig& config,
             TrainRun run) {
  std::vector<lm::Sentence> sentences;
  if (!fs::is_directory(corpus / "sentences"))
    throw Diagnostic({(corpus / "sentences").string()},
                     "no sentences: run `tlmc lm sample` with this corpus folder first");
  lm::LineageStage stage{"pretrain", {}};  // the subgraphs of the sentences read
  for (const auto& entry : fs::directory_iterator(corpus / "sentences"))
    if (entry.path().extension() == ".bin") {
      std::vector<lm::Sentence> s = lm::read_sentences(entry.path().string());
      if (s.empty()) continue;
      fs::path keys = entry.path();
      keys.replace_extension(".keys");
      for (const SampledKey& k : read_sampled_keys(keys)) stage.keys.emplace(k.key, k.family);
      sentences.insert(sentences.end(), std::make_move_iterator(s.begin()),
                       std::make_move_iterator(s.end()));
    }
  sort_sentences(sentences);
  if (sentences.empty())
    throw Diagnostic({(corpus / "sentences").string()}, "no sentences: run `tlmc lm sample` first");
  size_t longest = 0;
  for (const lm::Sentence& s : sentences) longest = std::max(longest, s.tokens.size());
  if (longest > static_cast<size_t>(config.context))
    throw Diagnostic({corpus.string()}, "a sentence of " + std::to_string(longest) +
                                            " tokens exceeds the context of " +
                                            std::to_string(config.context) + " (raise --context)");
  // A corpus with CUDA targets' sentences makes a model of CUDA targets, which knows their
  // words; else one of CPU targets (lm/vocabulary.h, KnownWords).
  lm::GptConfig c = config;
  c.cuda = std::any_of(sentences.begin(), sentences.end(), [](const lm::Sentence& x) {
    return std::any_of(x.tokens.begin(), x.tokens.end(),
                       [](lm::Token t) { return lm::Vocabulary::get().cuda_only(t); });
  });
  lm::Gpt model(c, run.seed);
  run.checkpoint = (corpus / "pretrain.ckpt").string();
  std::fprintf(stderr,
               "tlmc lm pretrain: %zu sentences, %zu parameters (%d channels, %d layers, %d "
               "heads), %lld steps of %d sentences\n",
               sentences.size(), model.parameters().size(), config.channels, config.layers,
               config.heads, static_cast<long long>(run.steps), run.batch);
  train(model, sentences, run);
  save_with_lineage(output, model, lm::Lineage{std::nullopt, {std::move(stage)}});
  std::fprintf(stderr, "tlmc lm pretrain: wrote %s and its lineage\n", output.c_str());
  return 0;
}

// The starting model of finetune and demonstrate: --model's file, else a bundled one: the
// CUDA model where `from_db`'s successful records are of CUDA targets (measured on a GPU by
// -O2 or -O3), else the CPU model. A database of both kinds needs --model.
struct StartingModel {
  lm::Gpt model;
  lm::Lineage lineage;  // as far as known (lineage_of)
};
StartingModel starting_model(const po::variables_map& vm, const std::string& from_db = "") {
  if (vm.count("model")) {
    const std::string path = vm["model"].as<std::string>();
    lm::Checkpoint c = lm::load_checkpoint(path);
    lm::Lineage lineage = lineage_of(path, c);
    return {std::move(c.model), std::move(lineage)};
  }
  bool cpu = false, cuda = false;
  if (!from_db.empty() && fs::exists(from_db))
    for (const scheduler::TuningRecord& r :
         scheduler::TuningDb::open(from_db, scheduler::DbAccess::Read).all())
      if (r.status == scheduler::MeasureStatus::Ok)
        if (const std::optional<ir::Target> t = ir::parse_descriptor(r.target))
          (t->is_cuda() ? cuda : cpu) = true;
  if (cpu && cuda)
    throw Diagnostic({from_db},
                     "the database holds records of CPU and of CUDA targets, and each kind has "
                     "a bundled model of its own: name the model to start from with --model");
  if (cuda) {
    std::fprintf(stderr,
                 "tlmc lm finetune: starting from the bundled CUDA model (the records "
                 "are of CUDA targets)\n");
    const ir::Target cuda_target = *ir::parse_target("cuda-sm80");
    return {lm::default_model(cuda_target), lm::default_model_lineage(cuda_target)};
  }
  const ir::Target cpu_target;
  return {lm::default_model(cpu_target), lm::default_model_lineage(cpu_target)};
}

// Demonstrations: the fastest successful record of each workload and target (`top` of
// them) whose program and schedule read back, as sentences. A record counts only when it
// ran at least `min_gain` times faster than the -O0 schedule's record of its workload,
// where the database has one (tuning measures it first); when none does, the -O0
// schedule is the demonstration: a best of a few measurements within the timing noise of
// the rule's is noise, and the model learns the rule there instead. What was left out,
// and why, is counted in the progress line. Each is written for `model`: its context, and
// without the spaces it cannot name (as it is asked to write them); a point of a sketch it
// cannot name counts as not a point of the spaces.
// `demonstrated` gets each workload-target pair that gave one ("KEY\nDESCRIPTOR"). A
// workload that `held_out` holds is left out, counted.
std::vector<lm::Sentence> demonstrations(
    const std::string& db_path, int top, double min_gain, const lm::GptConfig& model,
    const std::function<bool(const std::string& key)>& held_out,
    std::set<std::string>& demonstrated) {
  if (!fs::exists(db_path))
    throw Diagnostic({db_path}, "no tuning database here (give one that -O2 or -O3 wrote)");
  const scheduler::TuningDb db = scheduler::TuningDb::open(db_path, scheduler::DbAccess::Read);
  std::map<std::string, std::vector<scheduler::TuningRecord>> groups;  // fastest first
  for (scheduler::TuningRecord& r : db.all())
    if (r.status == scheduler::MeasureStatus::Ok)
      groups[r.workload_key + "\n" + r.target].push_back(std::move(r));
  std::vector<lm::Sentence> out;
  size_t in_model = 0, no_program = 0, other_form = 0, too_long = 0, as_rule = 0, held = 0;
  for (const auto& [group, records] : groups) {
    if (held_out(records[0].workload_key)) {
      ++held;
      continue;
    }
    // A descriptor with words after it (" context=model") timed the kernel inside a model:
    // not a time of the kernel alone.
    const std::optional<ir::Target> target = ir::parse_descriptor(records[0].target);
    if (!target || target->descriptor() != records[0].target) {
      in_model += std::min(records.size(), static_cast<size_t>(top));
      continue;
    }
    ir::TeProgram program;
    try {
      program = ir::te_from_text(records[0].workload);
    } catch (const ir::TeTextError&) {
      ++no_program;  // recorded by an older tlmc, without its program
      continue;
    }
    const RecordedSpaces spaces = recorded_spaces(program, *target, records);
    const scheduler::Sketches& sketches = spaces.sketches;
    const std::string rule = scheduler::space_schedule_text(
        sketches, scheduler::SpacePoint{0, scheduler::default_values(sketches[0])});
    // The records that are points of the spaces, fastest first. A decision list
    // (tlmc-schedule 1), spaces of another tlmc, or a value a space no longer lists is left
    // out, counted.
    std::vector<std::pair<const scheduler::TuningRecord*, scheduler::SpacePoint>> points;
    for (size_t i = 0; i < records.size(); ++i) {
      if (spaces.points[i])
        points.emplace_back(&records[i], *spaces.points[i]);
      else
        ++other_form;
    }
    const auto rule_record = std::find_if(points.begin(), points.end(),
                                          [&](const auto& p) { return p.first->schedule == rule; });
    std::vector<const scheduler::SpacePoint*> chosen;
    for (const auto& [r, point] : points)
      if (static_cast<int>(chosen.size()) < top &&
          (min_gain <= 1 || rule_record == points.end() ||
           r->seconds * min_gain <= rule_record->first->seconds))
        chosen.push_back(&point);
    if (chosen.empty() && rule_record != points.end()) {
      chosen.push_back(&rule_record->second);
      ++as_rule;
    }
    const std::vector<lm::Token> prompt = lm::prompt_tokens(program, *target);
    for (const scheduler::SpacePoint* point : chosen) {
      lm::Sentence s;
      try {
        s = lm::tensor_sentence(prompt, sketches, *point, model.known_words());
      } catch (const scheduler::InvalidDecision&) {
        ++other_form;  // a sketch the model cannot name
        continue;
      }
      if (s.tokens.size() > static_cast<size_t>(model.context)) {
        ++too_long;
        continue;
      }
      out.push_back(std::move(s));
      demonstrated.insert(group);
    }
  }
  std::fprintf(stderr,
               "tlmc lm finetune: %zu demonstrations from %zu workload-target pairs of %s (%zu "
               "of them the -O0 schedule, nothing %.2f times faster; left out: %zu pairs held "
               "out, %zu timed in a model, %zu without their program, %zu not a point of the "
               "spaces, %zu longer than the context)\n",
               out.size(), groups.size(), db_path.c_str(), as_rule, min_gain, held, in_model,
               no_program, other_form, too_long);
  return out;
}

// Rehearsal: up to `count` sentences of the corpus (drawn by the seed) whose subgraph and
// target have no demonstration, so that fine-tuning on a few hundred subgraphs does not
// unlearn what the model knew of the others. A sentence's subgraph is its file's key at
// its index over the sentences per subgraph (sample writes them in that order). Subgraphs
// that `held_out` holds are not rehearsed; `rehearsed` gets the keys of those that are.
std::vector<lm::Sentence> rehearsal(const fs::path& corpus,
                                    const std::set<std::string>& demonstrated, size_t count,
                                    uint64_t seed, int context,
                                    const std::function<bool(const std::string& key)>& held_out,
                                    std::set<std::string>& rehearsed) {
  if (!fs::is_directory(corpus / "sentences"))
    throw Diagnostic(
        {(corpus / "sentences").string()},
        "no sentences to rehearse: run `tlmc lm sample` with this corpus folder first");
  std::vector<std::pair<lm::Sentence, std::string>> pool;  // each with its subgraph's key
  for (const auto& entry : fs::directory_iterator(corpus / "sentences")) {
    if (entry.path().extension() != ".bin") continue;
    const std::string stem = entry.path().stem().string();
    const std::optional<ir::Target> target = ir::parse_target(stem.substr(stem.rfind('.') + 1));
    if (!target) continue;  // not a file `sample` named
    fs::path keys_path = entry.path();
    keys_path.replace_extension(".keys");
    const std::vector<SampledKey> keys = read_sampled_keys(keys_path);
    std::vector<lm::Sentence> s = lm::read_sentences(entry.path().string());
    if (s.empty() && keys.empty()) continue;  // a model whose subgraphs all came before
    if (keys.empty() || s.size() % keys.size() != 0)
      throw Diagnostic({keys_path.string()}, "does not list the subgraphs of its " +
                                                 std::to_string(s.size()) +
                                                 " sentences: sample this model again");
    const size_t per_key = s.size() / keys.size();
    const std::string descriptor = target->descriptor();
    for (size_t i = 0; i < s.size(); ++i) {
      const std::string& key = keys[i / per_key].key;
      std::string pair = key;
      pair.append("\n").append(descriptor);
      if (!demonstrated.count(pair) && s[i].tokens.size() <= static_cast<size_t>(context) &&
          !held_out(key))
        pool.emplace_back(std::move(s[i]), key);
    }
  }
  std::sort(pool.begin(), pool.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.tokens, a.second) < std::tie(b.first.tokens, b.second);
  });
  std::mt19937_64 rng(seed);
  std::shuffle(pool.begin(), pool.end(), rng);
  pool.resize(std::min(pool.size(), count));
  std::vector<lm::Sentence> out;
  for (auto& [sentence, key] : pool) {
    out.push_back(std::move(sentence));
    rehearsed.insert(key);
  }
  std::fprintf(stderr, "tlmc lm finetune: %zu sentences of %s rehearsed\n", out.size(),
               corpus.string().c_str());
  return out;
}

// What finetune holds out: the workloads `held_out` holds by key or by shape family, a
// workload's family taken from the starting model's lineage and the rehearsed corpus. Where
// the file names families, a workload of unknown family is held out too (it may be of one),
// and counted in `unknown`.
std::function<bool(const std::string&)> finetune_hold_out(
    const std::optional<HeldOut>& held_out, const std::map<std::string, std::string>& families,
    std::set<std::string>& unknown) {
  if (!held_out) return [](const std::string&) { return false; };
  return [&held_out = *held_out, &families, &unknown](const std::string& key) {
    if (held_out.keys.count(key)) return true;
    if (held_out.families.empty()) return false;
    const auto f = families.find(key);
    if (f == families.end() || f->second.empty()) {
      unknown.insert(key);
      return true;
    }
    return held_out.holds(key, f->second);
  };
}

int finetune(const std::string& db_path, const std::string& output, const StartingModel& start,
             int top, double min_gain, int epochs, const std::optional<fs::path>& rehearse,
             size_t rehearse_count, const std::optional<HeldOut>& held_out, TrainRun run) {
  // The model learns the words the language gained since it was trained (the spaces they
  // name become its to decide): their rows start as <unk>'s, as it read them until now.
  lm::Gpt model = lm::with_whole_vocabulary(start.model);
  if (model.config().vocab != start.model.config().vocab)
    std::fprintf(stderr,
                 "tlmc lm finetune: the model knew %d of the language's %d tokens; the others "
                 "start as it read them, as <unk>\n",
                 start.model.config().vocab, model.config().vocab);
  // Shape families of the workloads, as far as known: the starting model's lineage, then
  // the rehearsed corpus's listing.
  std::map<std::string, std::string> families;
  for (const lm::LineageStage& stage : start.lineage.stages)
    for (const auto& [key, family] : stage.keys)
      if (!family.empty()) families[key] = family;
  if (rehearse)
    for (const auto& [key, family] : corpus_families(*rehearse))
      if (!family.empty()) families[key] = family;
  std::set<std::string> unknown;
  const auto holds = finetune_hold_out(held_out, families, unknown);
  std::set<std::string> demonstrated;
  std::vector<lm::Sentence> sentences =
      demonstrations(db_path, top, min_gain, model.config(), holds, demonstrated);
  if (!unknown.empty())
    std::fprintf(stderr,
                 "tlmc lm finetune: %zu workloads held out for want of their shape family (the "
                 "hold-out names families; --rehearse the corpus they were sampled in tells "
                 "theirs)\n",
                 unknown.size());
  if (sentences.empty())
    throw Diagnostic({db_path},
                     "no demonstrations: the database has no successful record "
                     "that reads back as a tensor sentence and is not held out");
  lm::LineageStage stage{"finetune", {}};  // the subgraphs of the sentences trained on
  const auto add = [&](const std::string& key) {
    const auto f = families.find(key);
    stage.keys.emplace(key, f == families.end() ? "" : f->second);
  };
  for (const std::string& pair : demonstrated) add(pair.substr(0, pair.find('\n')));
  if (rehearse) {
    // As many rehearsed sentences as demonstrations unless told: half of each batch, on
    // average. More where the model is to imitate the corpus's rule sentences (spaces it
    // never saw: a few hundred measured subgraphs teach it little of them).
    std::set<std::string> rehearsed;
    std::vector<lm::Sentence> r =
        rehearsal(*rehearse, demonstrated, rehearse_count ? rehearse_count : sentences.size(),
                  run.seed, model.config().context, holds, rehearsed);
    for (const std::string& key : rehearsed) add(key);
    sentences.insert(sentences.end(), std::make_move_iterator(r.begin()),
                     std::make_move_iterator(r.end()));
  }
  sort_sentences(sentences);
  run.steps = std::max<int64_t>(
      1, (static_cast<int64_t>(sentences.size()) * epochs + run.batch - 1) / run.batch);
  run.checkpoint = output + ".ckpt";
  train(model, sentences, run);
  lm::Lineage lineage = start.lineage;
  lineage.stages.push_back(std::move(stage));
  save_with_lineage(output, model, lineage);
  fs::remove(run.checkpoint);
  std::fprintf(stderr, "tlmc lm finetune: wrote %s and its lineage\n", output.c_str());
  return 0;
}

// How a round draws its subgraphs from the corpus.
enum class Draw {
  Uniform,  // in a seeded order of all of them
  ByKind,   // in turn from each kind (subgraph_kind), each kind in a seeded order
};

// A subgraph's kind, for drawing demonstrations evenly over kinds: the operator of its
// stage with the most iterations (spatial times reduction; the first of equals) and how
// many of that stage's reduction axes are longer than one, "conv/3" for a 3x3
// convolution, "conv/1" for a 1x1, "conv/2" for a depthwise one, "matmul/1", "add/0".
// A corpus has about ten times more 1x1 convolutions than matrix products; drawn
// uniformly, a round demonstrates almost none of the latter.
std::string subgraph_kind(const ir::TeProgram& program) {
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
  if (!heaviest) return "none";
  const auto longer = std::count_if(heaviest->reduce_axes.begin(), heaviest->reduce_axes.end(),
                                    [](const ir::Axis& a) { return a.extent > 1; });
  return heaviest->op + "/" + std::to_string(longer);
}

// `keys` (in a seeded order) reordered to take one of each kind in turn: the first of
// every kind, then the second of every kind, ... A key without a readable program in the
// corpus is a kind of its own ("?").
std::vector<std::string> interleave_kinds(const fs::path& corpus,
                                          const std::vector<std::string>& keys) {
  std::map<std::string, std::vector<std::string>> by_kind;
  for (const std::string& k : keys) {
    std::string kind = "?";
    std::ifstream f(program_path(corpus, k));
    std::stringstream text;
    text << f.rdbuf();
    try {
      if (f) kind = subgraph_kind(ir::te_from_text(text.str()));
    } catch (const ir::TeTextError&) {
    }
    by_kind[kind].push_back(k);
  }
  std::vector<std::string> out;
  for (size_t i = 0; out.size() < keys.size(); ++i)
    for (const auto& [kind, members] : by_kind)
      if (i < members.size()) out.push_back(members[i]);
  return out;
}

// A model a subgraph was sampled from, and whether with its products in bfloat16.
struct SampledModel {
  std::string path;
  bool bf16 = false;
  bool operator<(const SampledModel& o) const {
    return std::tie(path, bf16) < std::tie(o.path, o.bf16);
  }
};

// The corpus's subgraphs in a seeded order, `count` of them: a round's demonstration set.
std::vector<std::string> chosen_subgraphs(const fs::path& corpus, const ir::Target& target,
                                          size_t count, uint64_t seed, Draw draw,
                                          std::map<std::string, SampledModel>& model_of) {
  std::vector<std::string> keys;
  if (fs::is_directory(corpus / "sentences"))
    for (const auto& entry : fs::directory_iterator(corpus / "sentences")) {
      const std::string name = entry.path().filename().string();
      const std::string suffix = "." + target.name + ".keys";
      if (name.size() < suffix.size() ||
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      const std::string stem = name.substr(0, name.size() - suffix.size());
      const bool bf16 =
          stem.size() > kBf16Marker.size() &&
          stem.compare(stem.size() - kBf16Marker.size(), kBf16Marker.size(), kBf16Marker) == 0;
      for (const SampledKey& k : read_sampled_keys(entry.path()))
        if (model_of.emplace(k.key, SampledModel{k.model, bf16}).second) keys.push_back(k.key);
    }
  if (keys.empty())
    throw Diagnostic({corpus.string()}, "no subgraphs sampled for target " + target.name +
                                            ": run `tlmc lm sample` with it first");
  std::sort(keys.begin(), keys.end());
  std::mt19937_64 rng(seed);
  std::shuffle(keys.begin(), keys.end(), rng);
  if (draw == Draw::ByKind) keys = interleave_kinds(corpus, keys);
  keys.resize(std::min(count, keys.size()));
  return keys;
}

// A round of demonstrations: each chosen subgraph gets `search`'s proposals (the model's, or
// those of the evolutionary search it seeds) measured here until it has `round` times
// `trials` measurements in the database (records of earlier rounds count: a killed run
// resumes, and round 2 adds `trials` more to each).
int demonstrate(const fs::path& corpus, const std::string& db_path, const lm::Gpt& model,
                size_t subgraphs, Draw draw, int64_t trials, int round, tune::SearchKind search,
                uint64_t seed) {
  const ir::Target target = ir::host_target();
  std::map<std::string, SampledModel> model_of;
  const std::vector<std::string> keys =
      chosen_subgraphs(corpus, target, subgraphs, seed, draw, model_of);
  std::map<SampledModel, std::vector<std::string>> by_model;
  for (const std::string& k : keys) by_model[model_of.at(k)].push_back(k);
  scheduler::TuningDb db = scheduler::TuningDb::open(db_path, scheduler::DbAccess::Write);
  tune::TuneOptions options;
  options.search = search;
  options.model_search.model = &model;  // the model's search, or the evolutionary search's seeds
  options.measure.threads = target.cores;
  options.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.seed = seed + static_cast<uint64_t>(round);
  size_t done = 0;
  for (const auto& [model_file, model_keys] : by_model) {
    SplitModel split;
    try {
      split = split_model_file(model_file.path, target, model_file.bf16);
    } catch (const Diagnostic& d) {
      // A model moved or removed since it was sampled: its subgraphs are left out.
      done += model_keys.size();
      std::fprintf(stderr, "tlmc lm demonstrate: %zu subgraphs left out: %s\n", model_keys.size(),
                   d.format().c_str());
      continue;
    }
    for (const Distinct& d : split.distinct) {
      if (std::find(model_keys.begin(), model_keys.end(), d.key) == model_keys.end()) continue;
      std::ostringstream quiet;
      const tune::TuneTask task{tune::make_measure_task(
          split.plans[static_cast<size_t>(d.plan)].graph, d.nodes, d.lowered, 1)};
      options.trials = trials * round;
      const std::vector<tune::TaskReport> r =
          tune::tune_tasks({task}, target, db, options, quiet, false);
      ++done;
      std::fprintf(stderr,
                   "tlmc lm demonstrate: [%zu/%zu] %s: %lld trials, best %.1f GFLOP/s (-O0 %.1f)\n",
                   done, keys.size(), d.key.c_str(), static_cast<long long>(r[0].trials),
                   r[0].best_seconds > 0 ? r[0].flops / r[0].best_seconds * 1e-9 : 0.0,
                   r[0].default_seconds > 0 ? r[0].flops / r[0].default_seconds * 1e-9 : 0.0);
    }
  }
  return 0;
}

}  // namespace

namespace {

ir::Target parse_target_option(const po::variables_map& vm) {
  const std::optional<ir::Target> target = ir::parse_target(vm["target"].as<std::string>());
  if (!target) throw std::invalid_argument(ir::unknown_target(vm["target"].as<std::string>()));
  return *target;
}

// --precision of keys and sample: whether the models' products are demoted to bfloat16 first,
// as `tlmc --precision bf16` compiles them (a CPU target with AVX512_BF16 or AMX).
bool parse_precision_option(const po::variables_map& vm, const ir::Target& target) {
  const std::string p = vm["precision"].as<std::string>();
  if (p != "fp32" && p != "bf16")
    throw std::invalid_argument("--precision takes fp32 or bf16, not '" + p + "'");
  if (p == "bf16" && (target.is_cuda() || target.bf16 == ir::Bf16Unit::None))
    throw std::invalid_argument("--precision bf16 needs a CPU target with AVX512_BF16 or AMX (" +
                                target.name +
                                " has neither): name one, such as --target x86-64-amx");
  return p == "bf16";
}

}  // namespace

static int run_lm_command_checked(const std::vector<std::string>& args) {
  po::options_description opts;
  opts.add_options()("output,o", po::value<std::string>())("per-subgraph",
                                                           po::value<int>()->default_value(64))(
      "decisions", po::value<std::string>()->default_value("uniform"))(
      "rehearse", po::value<std::string>())("rehearse-count", po::value<int64_t>())(
      "seed", po::value<uint64_t>()->default_value(1))(
      "target", po::value<std::string>()->default_value("host"))(
      "hold-out", po::value<std::string>())("steps", po::value<int64_t>()->default_value(2000))(
      "batch", po::value<int>()->default_value(16))("learning-rate", po::value<float>())(
      "channels", po::value<int>()->default_value(128))(
      "layers", po::value<int>()->default_value(4))("heads", po::value<int>()->default_value(4))(
      "context", po::value<int>()->default_value(768))("from-db", po::value<std::string>())(
      "model", po::value<std::string>())("top", po::value<int>()->default_value(1))(
      "epochs", po::value<int>()->default_value(8))("tuning-db", po::value<std::string>())(
      "subgraphs", po::value<int64_t>()->default_value(100))(
      "trials", po::value<int64_t>()->default_value(32))("round",
                                                         po::value<int>()->default_value(1))(
      "search", po::value<std::string>()->default_value("model"))(
      "draw", po::value<std::string>()->default_value("uniform"))(
      "min-gain", po::value<double>()->default_value(1.0))("corpus", po::value<std::string>())(
      "lineage", po::value<std::string>())("precision",
                                           po::value<std::string>()->default_value("fp32"))(
      "folds", po::value<int>()->default_value(5))("drafts", po::value<int>()->default_value(4))(
      "max-slower", po::value<double>()->default_value(0.01));
  po::variables_map vm;
  const std::vector<std::string> words = parse_subcommand(args, opts, vm);
  if (std::optional<int> status = usage_asked(vm, words, kUsage)) return *status;
  const std::string& verb = words[0];
  auto rate = [&](float fallback) {
    const float r = vm.count("learning-rate") ? vm["learning-rate"].as<float>() : fallback;
    if (!(r > 0)) throw std::invalid_argument("--learning-rate takes a positive value");
    return r;
  };
  auto train_run = [&](const char* name, float fallback_rate) {
    TrainRun run;
    run.verb = name;
    run.steps = vm["steps"].as<int64_t>();
    run.batch = vm["batch"].as<int>();
    run.learning_rate = rate(fallback_rate);
    run.seed = vm["seed"].as<uint64_t>();
    if (run.steps < 1 || run.batch < 1)
      throw std::invalid_argument("--steps and --batch take positive values");
    return run;
  };
  if (verb == "keys") {
    if (words.size() < 2) throw std::invalid_argument("tlmc lm keys needs models");
    const ir::Target target = parse_target_option(vm);
    return print_keys(std::vector<std::string>(words.begin() + 1, words.end()), target,
                      parse_precision_option(vm, target));
  }
  if (verb == "overlap") {
    if (words.size() < 2) throw std::invalid_argument("tlmc lm overlap needs models");
    if (!vm.count("corpus") && !vm.count("tuning-db") && !vm.count("lineage"))
      throw std::invalid_argument(
          "tlmc lm overlap needs what was trained on: --corpus CORPUS, --tuning-db FILE, "
          "--lineage FILE, or several");
    TrainingSources sources;
    if (vm.count("corpus")) sources.corpus = vm["corpus"].as<std::string>();
    if (vm.count("tuning-db")) sources.tuning_db = vm["tuning-db"].as<std::string>();
    if (vm.count("lineage")) sources.lineage = vm["lineage"].as<std::string>();
    const ir::Target target = parse_target_option(vm);
    return print_overlap(std::vector<std::string>(words.begin() + 1, words.end()), sources, target,
                         parse_precision_option(vm, target));
  }
  if (verb == "finetune") {
    if (words.size() > 1) throw std::invalid_argument("tlmc lm finetune takes no folder or model");
    if (!vm.count("from-db")) throw std::invalid_argument("tlmc lm finetune needs --from-db FILE");
    if (!vm.count("output")) throw std::invalid_argument("tlmc lm finetune needs -o MODEL.tlm");
    const int top = vm["top"].as<int>(), epochs = vm["epochs"].as<int>();
    if (top < 1 || epochs < 1) throw std::invalid_argument("--top and --epochs take counts >= 1");
    std::optional<fs::path> rehearse;
    if (vm.count("rehearse")) rehearse = vm["rehearse"].as<std::string>();
    int64_t rehearse_count = 0;
    if (vm.count("rehearse-count")) {
      if (!rehearse) throw std::invalid_argument("--rehearse-count goes with --rehearse CORPUS");
      rehearse_count = vm["rehearse-count"].as<int64_t>();
      if (rehearse_count < 1) throw std::invalid_argument("--rehearse-count takes a count >= 1");
    }
    const double min_gain = vm["min-gain"].as<double>();
    if (!(min_gain >= 1.0))
      throw std::invalid_argument("--min-gain takes a ratio >= 1 (1: the fastest record)");
    std::optional<HeldOut> held_out;
    if (vm.count("hold-out")) held_out = read_held_out(vm["hold-out"].as<std::string>());
    return finetune(vm["from-db"].as<std::string>(), vm["output"].as<std::string>(),
                    starting_model(vm, vm["from-db"].as<std::string>()), top, min_gain, epochs,
                    rehearse, static_cast<size_t>(rehearse_count), held_out,
                    train_run("finetune", 3e-4f));
  }
  if (verb == "verifier") {
    if (words.size() < 2) throw std::invalid_argument("tlmc lm verifier needs tuning databases");
    if (!vm.count("output")) throw std::invalid_argument("tlmc lm verifier needs -o FILE.tsm");
    VerifierOptions v;
    v.databases.assign(words.begin() + 1, words.end());
    v.output = vm["output"].as<std::string>();
    if (vm.count("corpus")) v.corpus = vm["corpus"].as<std::string>();
    if (vm.count("hold-out")) v.held_out = read_held_out(vm["hold-out"].as<std::string>());
    v.folds = vm["folds"].as<int>();
    v.drafts = vm["drafts"].as<int>();
    v.max_slower = vm["max-slower"].as<double>();
    if (v.folds < 2 || v.drafts < 1)
      throw std::invalid_argument("--folds takes a count >= 2 and --drafts one >= 1");
    if (!(v.max_slower >= 0 && v.max_slower <= 1))
      throw std::invalid_argument("--max-slower takes a share from 0 to 1");
    return train_verifier(v);
  }
  if (words.size() < 2) throw std::invalid_argument("tlmc lm " + verb + " needs a corpus folder");
  const fs::path corpus = words[1];
  if (verb == "sample") {
    if (words.size() < 3) throw std::invalid_argument("tlmc lm sample needs models to sample");
    const std::string& kind = vm["decisions"].as<std::string>();
    if (kind != "uniform" && kind != "rule" && kind != "estimate")
      throw std::invalid_argument("--decisions takes uniform, rule or estimate, not '" + kind +
                                  "'");
    const SampledDecisions decisions = kind == "rule"       ? SampledDecisions::Rule
                                       : kind == "estimate" ? SampledDecisions::Estimate
                                                            : SampledDecisions::Uniform;
    const ir::Target target = parse_target_option(vm);
    if (decisions == SampledDecisions::Estimate && !target.is_cuda())
      throw std::invalid_argument(
          "--decisions estimate ranks CUDA schedules by the analytic model; a CPU target's are "
          "measured (tlmc lm demonstrate)");
    if (decisions != SampledDecisions::Uniform && !vm["per-subgraph"].defaulted())
      throw std::invalid_argument("--decisions " + kind +
                                  " writes one sentence per subgraph: leave out --per-subgraph");
    const int per = decisions == SampledDecisions::Uniform ? vm["per-subgraph"].as<int>() : 1;
    if (per < 1) throw std::invalid_argument("--per-subgraph takes a count >= 1");
    HeldOut held_out;
    if (vm.count("hold-out")) held_out = read_held_out(vm["hold-out"].as<std::string>());
    return sample(corpus, std::vector<std::string>(words.begin() + 2, words.end()), per, decisions,
                  vm["seed"].as<uint64_t>(), target, parse_precision_option(vm, target), held_out);
  }
  if (verb == "pretrain") {
    if (words.size() > 2) throw std::invalid_argument("tlmc lm pretrain takes one corpus folder");
    if (!vm.count("output")) throw std::invalid_argument("tlmc lm pretrain needs -o MODEL.tlm");
    const lm::GptConfig config{static_cast<int>(lm::Vocabulary::get().size()),
                               vm["context"].as<int>(), vm["channels"].as<int>(),
                               vm["layers"].as<int>(), vm["heads"].as<int>()};
    if (config.context < 16 || config.channels < 1 || config.layers < 1 || config.heads < 1 ||
        config.channels % config.heads != 0)
      throw std::invalid_argument(
          "--layers and --heads take positive values, --context at least 16, and --channels a "
          "multiple of --heads");
    return pretrain(corpus, vm["output"].as<std::string>(), config, train_run("pretrain", 1e-3f));
  }
  if (verb == "demonstrate") {
    if (words.size() > 2)
      throw std::invalid_argument("tlmc lm demonstrate takes one corpus folder");
    if (!vm.count("tuning-db"))
      throw std::invalid_argument("tlmc lm demonstrate needs --tuning-db FILE");
    const int64_t subgraphs = vm["subgraphs"].as<int64_t>(), trials = vm["trials"].as<int64_t>();
    const int round = vm["round"].as<int>();
    if (subgraphs < 1 || trials < 1 || round < 1)
      throw std::invalid_argument("--subgraphs, --trials and --round take counts >= 1");
    if (!ir::host_target().runs_here)
      throw Diagnostic({},
                       "tlmc lm demonstrate measures on this machine, which runs no x86-64 target");
    const std::string search = vm["search"].as<std::string>();
    if (search != "model" && search != "evolutionary")
      throw std::invalid_argument("--search takes model or evolutionary, not '" + search + "'");
    const std::string draw = vm["draw"].as<std::string>();
    if (draw != "uniform" && draw != "by-kind")
      throw std::invalid_argument("--draw takes uniform or by-kind, not '" + draw + "'");
    const lm::Gpt model = starting_model(vm).model;
    return demonstrate(corpus, vm["tuning-db"].as<std::string>(), model,
                       static_cast<size_t>(subgraphs),
                       draw == "by-kind" ? Draw::ByKind : Draw::Uniform, trials, round,
                       search == "model" ? tune::SearchKind::Model : tune::SearchKind::Evolutionary,
                       vm["seed"].as<uint64_t>());
  }
  throw std::invalid_argument("unknown lm command '" + verb +
                              "' (known: keys, overlap, sample, pretrain, demonstrate, finetune, "
                              "verifier)");
}

int run_lm_command(const std::vector<std::string>& args) {
  try {
    return run_lm_command_checked(args);
  } catch (const lm::CheckpointError& e) {
    throw Diagnostic({}, e.what());  // a model or sentence file that is not one: bad input
  } catch (const lm::LineageError& e) {
    throw Diagnostic({}, e.what());  // a lineage file that is not one, or cannot be written
  }
}

}  // namespace tlmc::driver
