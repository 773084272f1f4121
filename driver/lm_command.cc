#include "driver/lm_command.h"

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <set>
#include <stdexcept>

#include "driver/compile.h"
#include "driver/layout_plans.h"
#include "driver/subcommand_words.h"
#include "frontend/fold_constants.h"
#include "ir/diagnostic.h"
#include "lm/checkpoint.h"
#include "lm/sentence_file.h"
#include "lm/tensor_sentence.h"
#include "lm/train.h"
#include "scheduler/sketch_rules.h"

namespace tlmc::driver {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

constexpr const char* kUsage =
    "Usage: tlmc lm sample CORPUS MODEL... [--per-subgraph N] [--seed S] [--target T]\n"
    "                                     [--hold-out FILE]\n"
    "       tlmc lm pretrain CORPUS -o MODEL.tlm [--steps N] [--batch B] [--learning-rate R]\n"
    "                                     [--channels C] [--layers L] [--heads H] [--context T]\n"
    "                                     [--seed S]\n\n"
    "The tensor language model's pipeline (docs/lm.md). CORPUS is a folder the commands\n"
    "keep their work in; each command resumes where a killed run of it stopped.\n"
    "  sample    the distinct subgraphs of each MODEL (.yaml or .onnx), except those whose\n"
    "            workload key --hold-out lists, each written as N sentences whose decisions\n"
    "            are drawn at random from its spaces (CORPUS/sentences/)\n"
    "  pretrain  trains a model on CORPUS's sentences (checkpoints in CORPUS/pretrain.ckpt)\n"
    "            and writes it to MODEL.tlm\n";

// The file a model's sentences go to: its name and the target, made safe.
std::string sentence_stem(const std::string& model, const ir::Target& target) {
  std::string stem = fs::path(model).stem().string() + "." + target.name;
  for (char& c : stem)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
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

void write_text(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream f(temp, std::ios::trunc);
    if (!(f << text) || !f.flush()) throw Diagnostic({path}, "cannot write the file");
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0)
    throw Diagnostic({path}, "cannot write the file");
}

// Each model: its distinct subgraphs (all layout plans) not held out and not sampled from an
// earlier model, `per_subgraph` random points each. A model is done once its sentences file
// exists; its keys file, written first, lists the subgraphs it sampled (the corpus listing
// the held-out check reads).
int sample(const fs::path& corpus, const std::vector<std::string>& models, int per_subgraph,
           uint64_t seed, const ir::Target& target, const std::set<std::string>& held_out) {
  fs::create_directories(corpus / "sentences");
  std::set<std::string> sampled;
  // A model's files: its sentences (".bin"), subgraph keys (".keys") or reason (".skipped").
  auto file = [&](const std::string& model, const char* extension) {
    return (corpus / "sentences" / (sentence_stem(model, target) + extension)).string();
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
    CompileOptions o;
    o.model_path = model;
    o.target = target;
    SplitModel split;
    try {
      split = split_model(frontend::fold_constants(read_model(o)), target, ActivationLayout::Auto,
                          nullptr);
    } catch (const Diagnostic& d) {
      // A model tlmc cannot read (an operator it lacks, say) is listed with the reason, and
      // the corpus goes on without it; remove the .skipped file to try it again.
      write_text(file(model, ".skipped"), d.format() + "\n");
      std::fprintf(stderr, "tlmc lm sample: [%zu/%zu] %s: skipped: %s\n", index, models.size(),
                   model.c_str(), d.format().c_str());
      continue;
    }
    std::string keys;
    std::vector<lm::Sentence> sentences;
    size_t skipped_held_out = 0;
    for (const Distinct& d : split.distinct) {
      if (held_out.count(d.key)) {
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
            lm::tensor_sentence(prompt, sketches, scheduler::random_point(sketches, rng)));
      keys += d.key + "\t" + model + "\t" + split.plans[static_cast<size_t>(d.plan)].name + "\n";
    }
    write_text(file(model, ".keys"), keys);
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

struct PretrainOptions {
  std::string output;
  int64_t steps = 2000;
  int batch = 16;
  float learning_rate = 1e-3f;
  lm::GptConfig config;
  uint64_t seed = 1;
};

int pretrain(const fs::path& corpus, const PretrainOptions& p) {
  std::vector<lm::Sentence> sentences;
  if (!fs::is_directory(corpus / "sentences"))
    throw Diagnostic({(corpus / "sentences").string()},
                     "no sentences: run `tlmc lm sample` with this corpus folder first");
  for (const auto& entry : fs::directory_iterator(corpus / "sentences"))
    if (entry.path().extension() == ".bin") {
      std::vector<lm::Sentence> s = lm::read_sentences(entry.path().string());
      sentences.insert(sentences.end(), std::make_move_iterator(s.begin()),
                       std::make_move_iterator(s.end()));
    }
  // Files in directory order: sort by content for a run that does not depend on it.
  std::sort(sentences.begin(), sentences.end(),
            [](const lm::Sentence& a, const lm::Sentence& b) { return a.tokens < b.tokens; });
  if (sentences.empty())
    throw Diagnostic({(corpus / "sentences").string()}, "no sentences: run `tlmc lm sample` first");
  size_t longest = 0;
  for (const lm::Sentence& s : sentences) longest = std::max(longest, s.tokens.size());
  if (longest > static_cast<size_t>(p.config.context))
    throw Diagnostic({corpus.string()}, "a sentence of " + std::to_string(longest) +
                                            " tokens exceeds the context of " +
                                            std::to_string(p.config.context));
  const std::string ckpt = (corpus / "pretrain.ckpt").string();
  lm::AdamWOptions adam;
  adam.learning_rate = p.learning_rate;
  adam.total_steps = p.steps;
  adam.warmup_steps = std::min<int64_t>(100, p.steps / 10 + 1);
  lm::Gpt model(p.config, p.seed);
  lm::AdamWState state;
  if (fs::exists(ckpt)) {
    lm::Checkpoint c = lm::load_checkpoint(ckpt);
    if (!(c.model.config() == p.config) || !c.optimiser)
      throw Diagnostic({ckpt}, "a checkpoint of another model size: remove it to start over");
    model = std::move(c.model);
    state = std::move(*c.optimiser);
    std::fprintf(stderr, "tlmc lm pretrain: resuming at step %lld\n",
                 static_cast<long long>(state.step));
  }
  std::fprintf(stderr,
               "tlmc lm pretrain: %zu sentences, %zu parameters (%d channels, %d layers, %d "
               "heads), %lld steps of %d sentences\n",
               sentences.size(), model.parameters().size(), p.config.channels, p.config.layers,
               p.config.heads, static_cast<long long>(p.steps), p.batch);
  // Batches: an order of the sentences per epoch, from the seed and the epoch alone, so a
  // resumed run draws the batches the uninterrupted one would have.
  const size_t per_epoch = sentences.size() / static_cast<size_t>(p.batch) +
                           (sentences.size() % static_cast<size_t>(p.batch) != 0);
  std::vector<size_t> order;
  int64_t order_epoch = -1;
  auto t0 = std::chrono::steady_clock::now();
  size_t tokens = 0;
  float loss_sum = 0;
  int loss_count = 0;
  while (state.step < p.steps) {
    const int64_t epoch = state.step / static_cast<int64_t>(per_epoch);
    if (epoch != order_epoch) {
      order.resize(sentences.size());
      std::iota(order.begin(), order.end(), 0);
      std::mt19937_64 rng(p.seed * 1000003u + static_cast<uint64_t>(epoch));
      std::shuffle(order.begin(), order.end(), rng);
      order_epoch = epoch;
    }
    const size_t first = static_cast<size_t>(state.step % static_cast<int64_t>(per_epoch)) *
                         static_cast<size_t>(p.batch);
    std::vector<const lm::Sentence*> batch;
    for (size_t i = first; i < std::min(first + static_cast<size_t>(p.batch), order.size()); ++i) {
      batch.push_back(&sentences[order[i]]);
      tokens += sentences[order[i]].tokens.size();
    }
    const lm::Batch b = lm::make_batch(batch);
    model.zero_gradients();
    loss_sum += model.forward(b);
    ++loss_count;
    model.backward();
    lm::adamw_step(model, state, adam);
    if (state.step % 50 == 0 || state.step == p.steps) {
      lm::save_checkpoint(ckpt, model, &state);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::fprintf(stderr, "tlmc lm pretrain: step %lld/%lld loss %.4f lr %.2e %.0f tokens/s\n",
                   static_cast<long long>(state.step), static_cast<long long>(p.steps),
                   loss_sum / loss_count, lm::learning_rate_at(adam, state.step - 1), tokens / s);
      t0 = std::chrono::steady_clock::now();
      tokens = 0;
      loss_sum = 0;
      loss_count = 0;
    }
  }
  lm::save_checkpoint(p.output, model);
  std::fprintf(stderr, "tlmc lm pretrain: wrote %s\n", p.output.c_str());
  return 0;
}

}  // namespace

static int run_lm_command_checked(const std::vector<std::string>& args) {
  po::options_description opts;
  opts.add_options()("output,o", po::value<std::string>())(
      "per-subgraph", po::value<int>()->default_value(64))("seed",
                                                           po::value<uint64_t>()->default_value(1))(
      "target", po::value<std::string>()->default_value("host"))(
      "hold-out", po::value<std::string>())("steps", po::value<int64_t>()->default_value(2000))(
      "batch", po::value<int>()->default_value(16))("learning-rate",
                                                    po::value<float>()->default_value(1e-3f))(
      "channels", po::value<int>()->default_value(128))(
      "layers", po::value<int>()->default_value(4))("heads", po::value<int>()->default_value(4))(
      "context", po::value<int>()->default_value(512));
  po::variables_map vm;
  const std::vector<std::string> words = parse_subcommand(args, opts, vm);
  if (std::optional<int> status = usage_asked(vm, words, kUsage)) return *status;
  const std::string& verb = words[0];
  if (words.size() < 2) throw std::invalid_argument("tlmc lm " + verb + " needs a corpus folder");
  const fs::path corpus = words[1];
  if (verb == "sample") {
    if (words.size() < 3) throw std::invalid_argument("tlmc lm sample needs models to sample");
    const std::optional<ir::Target> target = ir::parse_target(vm["target"].as<std::string>());
    if (!target)
      throw std::invalid_argument("unknown --target '" + vm["target"].as<std::string>() +
                                  "' (known: " + ir::target_names() + ")");
    const int per = vm["per-subgraph"].as<int>();
    if (per < 1) throw std::invalid_argument("--per-subgraph takes a count >= 1");
    std::set<std::string> held_out;
    if (vm.count("hold-out")) held_out = read_keys(vm["hold-out"].as<std::string>());
    return sample(corpus, std::vector<std::string>(words.begin() + 2, words.end()), per,
                  vm["seed"].as<uint64_t>(), *target, held_out);
  }
  if (verb == "pretrain") {
    if (words.size() > 2) throw std::invalid_argument("tlmc lm pretrain takes one corpus folder");
    if (!vm.count("output")) throw std::invalid_argument("tlmc lm pretrain needs -o MODEL.tlm");
    PretrainOptions p;
    p.output = vm["output"].as<std::string>();
    p.steps = vm["steps"].as<int64_t>();
    p.batch = vm["batch"].as<int>();
    p.learning_rate = vm["learning-rate"].as<float>();
    p.seed = vm["seed"].as<uint64_t>();
    p.config =
        lm::GptConfig{static_cast<int>(lm::Vocabulary::get().size()), vm["context"].as<int>(),
                      vm["channels"].as<int>(), vm["layers"].as<int>(), vm["heads"].as<int>()};
    if (p.steps < 1 || p.batch < 1 || !(p.learning_rate > 0) || p.config.context < 16 ||
        p.config.channels < 1 || p.config.layers < 1 || p.config.heads < 1 ||
        p.config.channels % p.config.heads != 0)
      throw std::invalid_argument(
          "--steps, --batch, --learning-rate, --layers and --heads take positive values, "
          "--context at least 16, and --channels a multiple of --heads");
    return pretrain(corpus, p);
  }
  throw std::invalid_argument("unknown lm command '" + verb + "' (known: sample, pretrain)");
}

int run_lm_command(const std::vector<std::string>& args) {
  try {
    return run_lm_command_checked(args);
  } catch (const lm::CheckpointError& e) {
    throw Diagnostic({}, e.what());  // a model or sentence file that is not one: bad input
  }
}

}  // namespace tlmc::driver
