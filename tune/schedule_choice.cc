#include "tune/schedule_choice.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>

#include "ir/diagnostic.h"
#include "ir/te_text.h"
#include "lm/checkpoint.h"
#include "lm/default_model.h"
#include "lm/generate.h"
#include "lm/tensor_sentence.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"
#include "tune/gpu_estimate_search.h"
#include "tune/speedup_model.h"

namespace tlmc::tune {

namespace {

// -O1: the width of the language model's beam search.
constexpr size_t kBeamWidth = 4;

// -v: a CUDA kernel's chosen estimate beside the -O0 point's.
void log_estimate(const ChoiceOptions& o, const std::string& key, const EstimateChoice& c,
                  const char* among) {
  if (!o.log) return;
  char line[240];
  std::snprintf(line, sizeof line,
                "tlmc: %s: estimated %.1f us (-O0 point %.1f us), best of %d %s%s (%d over a "
                "limit)\n",
                key.c_str(), c.chosen.seconds * 1e6, c.default_point.seconds * 1e6, c.ranked, among,
                c.built ? "" : ", registers assumed (no NVRTC)", c.refused);
  *o.log << line;
}

// The model file at `path`, read by `load` once per process and kept for it (never
// destroyed: XGBoost's own state may be gone by the time static objects are); a file that
// does not load is the user's mistake, a diagnostic led by `option`.
template <typename Model, typename Load>
const Model& loaded_once(const std::string& path, const std::string& option, Load load) {
  static std::mutex mutex;
  static auto* loaded = new std::map<std::string, std::unique_ptr<Model>>;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<Model>& model = (*loaded)[path];
  if (!model) {
    try {
      model = std::make_unique<Model>(load(path));
    } catch (const lm::CheckpointError& e) {
      throw Diagnostic({}, option + e.what());
    }
  }
  return *model;
}

// The speedup model of -O1 (ChoiceOptions::verifier); nullptr: none.
const SpeedupModel* verifier(const std::string& path) {
  if (path == "none") return nullptr;
  if (path.empty()) return default_speedup_model();
  return &loaded_once<SpeedupModel>(path, "--verifier: ", SpeedupModel::load);
}

// -v: -O1's verdict on a CPU kernel's drafts.
void log_verdict(const ChoiceOptions& o, const std::string& key, const DraftVerdict& v) {
  if (!o.log || v.predicted.empty()) return;
  const auto [low, high] = std::minmax_element(v.predicted.begin(), v.predicted.end());
  char line[240];
  if (v.chosen)
    std::snprintf(line, sizeof line,
                  "tlmc: %s: -O1 takes the language model's draft %zu of %zu, predicted %.2fx "
                  "the -O0 schedule's speed\n",
                  key.c_str(), *v.chosen + 1, v.predicted.size(), std::exp(v.predicted[*v.chosen]));
  else
    std::snprintf(line, sizeof line,
                  "tlmc: %s: -O1 keeps the -O0 schedule (the language model's %zu drafts "
                  "predicted %.2fx-%.2fx its speed)\n",
                  key.c_str(), v.predicted.size(), std::exp(*low), std::exp(*high));
  *o.log << line;
}

// -O1's schedule of a kernel: the language model's likeliest points (beam search), valid by
// construction (constrained decoding); the -O0 point where no sentence fits the model's
// context. On a CPU target, the speedup model checks the drafts against the -O0 schedule:
// the draft predicted fastest is taken where it is predicted clearly faster, else the -O0
// schedule (without a speedup model, the likeliest draft). On a CUDA target, where NVRTC builds and
// the analytic model estimates a point in about a second, the best by estimate of the beam's points
// and each sketch's default point, the -O0 point first (one whose registers put it over a limit
// refused: they cannot be bounded before ptxas allocates them).
std::vector<scheduler::Decision> model_schedule(const ChoiceOptions& o, const std::string& key,
                                                const ir::TeProgram& program) {
  const scheduler::Sketches sketches = scheduler::generate_sketches(program, o.target);
  const lm::Gpt& model = language_model(o.lm_model, o.target);
  if (!lm::speaks(model, sketches))
    throw Diagnostic({}, (o.lm_model.empty() ? "the bundled model" : "--lm-model " + o.lm_model) +
                             ": the language model does not know the words of " + o.target.name +
                             "'s schedules (a model trained on CPU sentences cannot write "
                             "CUDA ones); give a model trained on sentences of this kind of "
                             "target, or leave out --lm-model");
  const std::vector<lm::GeneratedPoint> best =
      lm::beam_search(model, lm::prompt_tokens(program, o.target), sketches, kBeamWidth);
  if (o.target.is_cuda()) {
    std::vector<scheduler::SpacePoint> points;
    for (const lm::GeneratedPoint& g : best) points.push_back(g.point);
    // The other sketches' default points too: a sketch the model cannot name (a rule added
    // since it was trained) is still ranked.
    for (size_t k = 1; k < sketches.size(); ++k)
      points.push_back({k, scheduler::default_values(sketches[k])});
    const EstimateChoice c = choose_among(program, o.target, sketches, points);
    log_estimate(o, key, c, "of the model's beam and each sketch's default point");
    return c.schedule;
  }
  if (best.empty()) return scheduler::default_schedule(program, o.target);
  std::vector<std::vector<scheduler::Decision>> drafts;
  for (const lm::GeneratedPoint& g : best)
    drafts.push_back(sketches[g.point.sketch].decisions(g.point.values));
  const SpeedupModel* check = verifier(o.verifier);
  if (!check) return drafts[0];
  std::vector<scheduler::Decision> rule = scheduler::default_schedule(program, o.target);
  const DraftVerdict v = verify_drafts(*check, program, o.target, rule, drafts);
  log_verdict(o, key, v);
  return v.chosen ? drafts[*v.chosen] : rule;
}

// -O2 and -O3 for a CUDA target where no GPU times candidates: the analytic model ranks the
// -O0 point, the CUDA model's beam (-O1's candidates, each built by NVRTC: the choice is
// never worse by the estimate than -O1's), the beam's points with their register tiles
// interleaved (interleaved_variants) and samples (half as many as the uniform draws),
// and the uniform draws of the spaces (31 at -O2, 127 at -O3: what the model has not learnt
// to propose, the same points as without the model); nothing is recorded.
std::vector<scheduler::Decision> estimated_schedule(const ChoiceOptions& o, const std::string& key,
                                                    const ir::TeProgram& program) {
  const uint64_t seed = std::stoull(key, nullptr, 16);
  const int candidates = estimated_candidates(o.opt_level);
  std::vector<scheduler::SpacePoint> proposed;
  size_t beam = 0;
  const scheduler::Sketches sketches = scheduler::generate_sketches(program, o.target);
  const lm::Gpt& model = language_model(o.lm_model, o.target);
  if (lm::speaks(model, sketches)) {
    const std::vector<lm::Token> prompt = lm::prompt_tokens(program, o.target);
    for (const lm::GeneratedPoint& g : lm::beam_search(model, prompt, sketches, kBeamWidth))
      proposed.push_back(g.point);
    beam = proposed.size();
    for (size_t i = 0; i < beam; ++i)
      for (scheduler::SpacePoint& q : interleaved_variants(sketches, proposed[i]))
        proposed.push_back(std::move(q));
    lm::SampleOptions sampling;
    sampling.seed = seed;
    for (const lm::GeneratedPoint& g :
         lm::sample_points(model, prompt, sketches, static_cast<size_t>(candidates / 2), sampling))
      proposed.push_back(g.point);
  }
  const EstimateChoice c =
      choose_by_estimate(program, o.target, sketches,
                         candidates + static_cast<int>(proposed.size()), seed, proposed, beam);
  log_estimate(o, key, c, "candidates");
  return c.schedule;
}

}  // namespace

void add_default_candidate(const ir::Target& target, const ir::TeProgram& program,
                           KernelCandidates& c) {
  c.workload = ir::te_to_text(program);
  const scheduler::Sketches sketches = scheduler::generate_sketches(program, target);
  const std::vector<int64_t> values = scheduler::default_values(sketches[0]);
  const std::string text = scheduler::space_schedule_text(sketches[0], values);
  c.default_index =
      static_cast<size_t>(std::find(c.texts.begin(), c.texts.end(), text) - c.texts.begin());
  if (c.default_index < c.texts.size()) return;
  c.texts.push_back(text);
  c.schedules.push_back(sketches[0].decisions(values));
}

std::optional<KernelRecords> kernel_records(const ChoiceOptions& o, const scheduler::TuningDb& db,
                                            const ir::TeProgram& program) {
  KernelRecords k;
  KernelCandidates& c = k.candidates;
  c.workload_key = ir::workload_key(program);
  std::optional<scheduler::Sketches> sketches;  // made for the first record that needs them
  for (const scheduler::TuningRecord& r : db.records(c.workload_key, o.target.descriptor())) {
    if (r.status != scheduler::MeasureStatus::Ok || c.records == kInModelCandidates) break;
    std::string why = "not a schedule this tlmc reads";
    try {
      std::optional<std::vector<scheduler::Decision>> schedule =
          scheduler::parse_schedule_record(r.schedule);
      if (schedule) scheduler::apply_schedule(program, *schedule);
      // A point of the spaces is checked against them (a record may come from a file
      // imported from anywhere): a value its space does not list is refused by name.
      if (!schedule) {
        if (!sketches) sketches = scheduler::generate_sketches(program, o.target);
        if (const std::optional<scheduler::SpacePoint> point =
                scheduler::parse_space_schedule(*sketches, r.schedule))
          schedule = (*sketches)[point->sketch].decisions(point->values);
      }
      // A decision list names its decisions alone: a tile product fits the workload anywhere.
      if (schedule && o.target.bf16 == ir::Bf16Unit::None &&
          std::any_of(schedule->begin(), schedule->end(), [](const scheduler::Decision& d) {
            return d.kind == scheduler::DecisionKind::Tensorize;
          }))
        throw scheduler::InvalidDecision("it computes with bf16 instructions the target lacks");
      if (schedule) {
        if (c.records == 0) k.best_seconds = r.seconds;
        c.texts.push_back(r.schedule);
        c.schedules.push_back(std::move(*schedule));
        ++c.records;
        continue;
      }
    } catch (const scheduler::InvalidDecision& e) {
      why = e.what();
    }
    if (o.log)
      *o.log << "tlmc: note: a tuning record of workload " << c.workload_key << " does not apply ("
             << why << "); trying the next\n";
  }
  if (c.records == 0) return std::nullopt;
  add_default_candidate(o.target, program, c);
  return k;
}

const lm::Gpt& language_model(const std::string& path, const ir::Target& target) {
  if (path.empty()) return lm::default_model(target);
  return loaded_once<lm::Gpt>(path, "",
                              [](const std::string& p) { return lm::load_checkpoint(p).model; });
}

int estimated_candidates(int opt_level) { return opt_level >= 3 ? 128 : 32; }

std::vector<scheduler::Decision> choose_schedule(const ChoiceOptions& o, const std::string& key,
                                                 const ir::TeProgram& program,
                                                 const std::optional<KernelRecords>& records,
                                                 const scheduler::TuningDb& db, int* from_records) {
  if (o.random_schedule_seed >= 0) {
    const uint64_t seed =
        static_cast<uint64_t>(o.random_schedule_seed) ^ std::stoull(key, nullptr, 16);
    return scheduler::random_schedule(program, o.target, seed);
  }
  if (!records && o.target.is_cuda() && o.opt_level >= 2)
    return estimated_schedule(o, key, program);
  if (!records && o.opt_level == 1) return model_schedule(o, key, program);
  if (!records) return scheduler::default_schedule(program, o.target);
  ++*from_records;
  const KernelCandidates& c = records->candidates;
  return c.schedules.at(chosen_candidate(c, db, o.target.descriptor() + kInModelContext));
}

}  // namespace tlmc::tune
