// bench_lm: the language model's speed on this machine: training steps (tokens per second)
// and generation as -O1 and -O2 use it (beam search of width 4; 128 samples, -O2's 32
// trials at 4 proposals each), over the subgraphs of the benchmark workloads W1-W6 and
// U1-U7. A benchmark, not a test: bench/README.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "ir/target.h"
#include "lm/checkpoint.h"
#include "lm/default_model.h"
#include "lm/generate.h"
#include "lm/tensor_sentence.h"
#include "lm/train.h"
#include "scheduler/partition.h"
#include "scheduler/sketch_rules.h"

namespace {

using Clock = std::chrono::steady_clock;
using tlmc::lm::Token;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Subgraph {
  tlmc::ir::TeProgram program;
  tlmc::scheduler::Sketches sketches;
  std::vector<Token> prompt;
};

std::vector<Subgraph> workload_subgraphs(const tlmc::ir::Target& target) {
  std::vector<Subgraph> out;
  for (const char* w :
       {"W1", "W2", "W3", "W4", "W5", "W6", "U1", "U2", "U3", "U4", "U5", "U6", "U7"}) {
    const tlmc::ir::Graph g = tlmc::frontend::read_yaml_model(std::string(TLMC_SOURCE_DIR) +
                                                              "/bench/workloads/" + w + ".yaml");
    for (const std::vector<int>& nodes : tlmc::scheduler::partition_graph(g).subgraphs) {
      Subgraph s;
      s.program = tlmc::ir::lower_subgraph(g, nodes).program;
      s.sketches = tlmc::scheduler::generate_sketches(s.program, target);
      s.prompt = tlmc::lm::prompt_tokens(s.program, target);
      out.push_back(std::move(s));
    }
  }
  return out;
}

// Tokens a point adds after the prompt: its sentence's length less the prompt's.
size_t decision_tokens(const Subgraph& s, const tlmc::scheduler::SpacePoint& p) {
  return tlmc::lm::tensor_sentence(s.prompt, s.sketches, p).tokens.size() - s.prompt.size();
}

}  // namespace

int main(int argc, char** argv) {
  std::string model_path;
  int steps = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--model" && i + 1 < argc) {
      model_path = argv[++i];
    } else if (a == "--steps" && i + 1 < argc) {
      steps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: bench_lm [--model FILE.tlm] [--steps N (20)]\n");
      return 2;
    }
  }
  const tlmc::ir::Target target = tlmc::ir::host_target();
  const tlmc::lm::Gpt model = model_path.empty() ? tlmc::lm::default_model(target)
                                                 : tlmc::lm::load_checkpoint(model_path).model;
  const std::vector<Subgraph> subgraphs = workload_subgraphs(target);
  const tlmc::lm::GptConfig& c = model.config();
  std::printf("# language model: %zu parameters (%d channels, %d layers, %d heads, context %d)\n",
              model.parameters().size(), c.channels, c.layers, c.heads, c.context);
  const char* blas_threads = std::getenv("OPENBLAS_NUM_THREADS");
  std::printf("# %s; OpenBLAS threads: %s; %zu subgraphs of W1-W6 and U1-U7\n",
              target.descriptor().c_str(), blas_threads ? blas_threads : "all cores",
              subgraphs.size());

  // Generation, one subgraph at a time as the compiler does.
  struct Row {
    const char* what;
    size_t points = 0, tokens = 0, prompt_tokens = 0;
    double seconds = 0;
  };
  Row beam{"beam search, width 4 (-O1)"}, sample{"128 samples (-O2, 32 trials)"};
  for (const Subgraph& s : subgraphs) {
    Clock::time_point t0 = Clock::now();
    const std::vector<tlmc::lm::GeneratedPoint> b =
        tlmc::lm::beam_search(model, s.prompt, s.sketches, 4);
    beam.seconds += seconds_since(t0);
    beam.prompt_tokens += s.prompt.size();
    for (const auto& p : b) beam.tokens += decision_tokens(s, p.point);
    beam.points += b.size();
    tlmc::lm::SampleOptions o;
    t0 = Clock::now();
    const std::vector<tlmc::lm::GeneratedPoint> d =
        tlmc::lm::sample_points(model, s.prompt, s.sketches, 128, o);
    sample.seconds += seconds_since(t0);
    sample.prompt_tokens += s.prompt.size();
    for (const auto& p : d) sample.tokens += decision_tokens(s, p.point);
    sample.points += d.size();
  }
  std::printf("\n| generation | schedules | s | schedules/s | decision tokens/s | prompts |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const Row& r : {beam, sample})
    std::printf("| %s | %zu | %.2f | %.1f | %.0f | %zu tokens |\n", r.what, r.points, r.seconds,
                r.points / r.seconds, r.tokens / r.seconds, r.prompt_tokens);

  // Training: batches of 16 sentences with uniformly drawn decisions, as pretraining's.
  std::vector<tlmc::lm::Sentence> sentences;
  std::mt19937_64 rng(1);
  for (const Subgraph& s : subgraphs)
    for (int i = 0; i < 16; ++i)
      sentences.push_back(tlmc::lm::tensor_sentence(
          s.prompt, s.sketches, tlmc::scheduler::random_point(s.sketches, rng)));
  tlmc::lm::Gpt trained = model;
  tlmc::lm::AdamWOptions adam;
  adam.total_steps = steps;
  tlmc::lm::AdamWState state;
  std::vector<size_t> lengths;
  for (const tlmc::lm::Sentence& s : sentences) lengths.push_back(s.tokens.size());
  size_t tokens = 0, padded = 0;
  const Clock::time_point t0 = Clock::now();
  for (int step = 0; step < steps; ++step) {
    const auto batches = tlmc::lm::epoch_batches(lengths, 16, 1, step);
    std::vector<const tlmc::lm::Sentence*> rows;
    for (size_t i : batches[0]) {
      rows.push_back(&sentences[i]);
      tokens += sentences[i].tokens.size();
    }
    const tlmc::lm::Batch b = tlmc::lm::make_batch(rows);
    padded += static_cast<size_t>(b.B) * static_cast<size_t>(b.T);
    trained.zero_gradients();
    trained.forward(b);
    trained.backward();
    tlmc::lm::adamw_step(trained, state, adam);
  }
  const double s = seconds_since(t0);
  std::printf("\n| training | steps | s | tokens/s | padded tokens/s |\n|---|---|---|---|---|\n");
  std::printf("| batches of 16 | %d | %.2f | %.0f | %.0f |\n", steps, s, tokens / s, padded / s);
  return 0;
}
