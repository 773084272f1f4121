#include "driver/lm_keys.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "driver/compile.h"
#include "frontend/fold_constants.h"
#include "frontend/reduced_precision.h"
#include "ir/diagnostic.h"
#include "ir/normalised_key.h"
#include "lm/lineage.h"
#include "scheduler/tuning_db.h"

namespace tlmc::driver {

namespace fs = std::filesystem;

HeldOut read_held_out(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw Diagnostic({path}, "cannot read the held-out keys file");
  HeldOut out;
  int number = 0;
  for (std::string line; std::getline(f, line);) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("family ", 0) == 0) {
      out.families.insert(line.substr(7));
      continue;
    }
    const std::string key = line.substr(0, line.find_first_of(" \t"));
    if (key.size() != 16 || key.find_first_not_of("0123456789abcdef") != std::string::npos)
      throw Diagnostic({path, number, 1},
                       "'" + key +
                           "' is no workload key (16 hex digits) and the line does not start "
                           "with 'family ': write the lines `tlmc lm keys` prints, or "
                           "'family NORMALISED KEY'");
    out.keys.insert(key);
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string field; std::getline(split, field, '\t');) fields.push_back(field);
    if (fields.size() >= 4) out.families.insert(fields[3]);
  }
  return out;
}

std::vector<SampledKey> read_sampled_keys(const fs::path& path) {
  std::vector<SampledKey> out;
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) {
    std::vector<std::string> fields;
    std::istringstream split(line);
    for (std::string field; std::getline(split, field, '\t');) fields.push_back(field);
    if (fields.empty()) fields.emplace_back();
    fields.resize(std::max<size_t>(fields.size(), 4));
    out.push_back({fields[0], fields[1], fields[3]});
  }
  return out;
}

namespace {

// The corpus's .keys files, in name order.
std::vector<fs::path> corpus_key_files(const fs::path& corpus) {
  const fs::path folder = corpus / "sentences";
  if (!fs::is_directory(folder))
    throw Diagnostic({corpus.string()},
                     "is no corpus: it has no sentences/ folder (tlmc lm sample writes one)");
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(folder))
    if (e.path().extension() == ".keys") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::map<std::string, std::string> corpus_families(const fs::path& corpus) {
  std::map<std::string, std::string> out;
  for (const fs::path& file : corpus_key_files(corpus))
    for (const SampledKey& k : read_sampled_keys(file))
      if (!k.key.empty()) out.emplace(k.key, k.family);
  return out;
}

SplitModel split_model_file(const std::string& model, const ir::Target& target, bool bf16) {
  CompileOptions o;
  o.model_path = model;
  o.target = target;
  ir::Graph graph = frontend::fold_constants(read_model(o));
  if (bf16) graph = frontend::demote_products_to_bf16(graph, frontend::PrecisionOptions{});
  return split_model(graph, target, ActivationLayout::Auto, nullptr);
}

int print_keys(const std::vector<std::string>& models, const ir::Target& target, bool bf16) {
  for (const std::string& model : models) {
    const SplitModel split = split_model_file(model, target, bf16);
    for (const Distinct& d : split.distinct) {
      const LayoutPlan& plan = split.plans[static_cast<size_t>(d.plan)];
      std::cout << d.key << "\t" << model << "\t" << plan.name << "\t"
                << ir::normalised_key(plan.graph, d.nodes) << "\n";
    }
  }
  return 0;
}

namespace {

// What a language model was trained on: workload keys, each with its shape family where
// known ("" where not) and where it came from.
struct TrainedOn {
  struct Entry {
    std::string family, source;
  };
  std::map<std::string, Entry> keys;
  std::map<std::string, std::string> families;  // family -> one source of it

  void add(const std::string& key, const std::string& family, const std::string& source) {
    const auto [at, added] = keys.emplace(key, Entry{family, source});
    if (!added && at->second.family.empty()) at->second.family = family;
    if (!family.empty()) families.emplace(family, source);
  }
};

// Every subgraph the corpus sampled (its .keys files), every stage's subgraphs of the
// lineage, and every workload of the tuning database (its records: what finetune reads),
// whose family is taken from the others where they list its key.
TrainedOn trained_on(const TrainingSources& sources) {
  TrainedOn out;
  if (sources.corpus)
    for (const fs::path& file : corpus_key_files(*sources.corpus))
      for (const SampledKey& k : read_sampled_keys(file))
        if (!k.key.empty()) out.add(k.key, k.family, k.model.empty() ? file.string() : k.model);
  if (sources.lineage) {
    const lm::Lineage lineage = lm::read_lineage(*sources.lineage);
    for (size_t i = 0; i < lineage.stages.size(); ++i)
      for (const auto& [key, family] : lineage.stages[i].keys)
        out.add(key, family,
                "stage " + std::to_string(i + 1) + " (" + lineage.stages[i].kind + ") of " +
                    *sources.lineage);
  }
  if (const std::optional<std::string>& db = sources.tuning_db) {
    if (!fs::exists(*db))
      throw Diagnostic({*db}, "no such tuning database: name the file tlmc tuned into");
    for (const scheduler::TuningSummary& w :
         scheduler::TuningDb::open(*db, scheduler::DbAccess::Read).summary())
      out.add(w.workload_key, "", "tuning database " + *db);
  }
  return out;
}

}  // namespace

// For each model, each distinct subgraph that the sources hold by workload key
// ("exact") or by shape family alone ("family"), then a count per model. Keys whose family
// nothing records (a corpus sampled before .keys had it, a database's workload that no
// corpus lists) are matched by key only, and counted.
int print_overlap(const std::vector<std::string>& models, const TrainingSources& sources,
                  const ir::Target& target, bool bf16) {
  const TrainedOn trained = trained_on(sources);
  int64_t unknown = 0;
  for (const auto& [key, entry] : trained.keys) unknown += entry.family.empty();
  std::ostringstream summary;
  for (const std::string& model : models) {
    const SplitModel split = split_model_file(model, target, bf16);
    int64_t exact = 0, family_only = 0;
    for (const Distinct& d : split.distinct) {
      const LayoutPlan& plan = split.plans[static_cast<size_t>(d.plan)];
      const std::string family = ir::normalised_key(plan.graph, d.nodes);
      std::string line = d.key;
      line.append("\t").append(model).append("\t").append(plan.name).append("\t");
      line.append(family).append("\t");
      if (const auto k = trained.keys.find(d.key); k != trained.keys.end()) {
        ++exact;
        std::cout << line << "exact\t" << k->second.source << "\n";
      } else if (const auto f = trained.families.find(family); f != trained.families.end()) {
        ++family_only;
        std::cout << line << "family\t" << f->second << "\n";
      }
    }
    summary << "# " << model << ": " << split.distinct.size() << " subgraphs, " << exact
            << " trained on by workload key, " << family_only << " more by shape family\n";
  }
  std::cout << summary.str();
  if (unknown > 0)
    std::cout << "# " << unknown << " of the " << trained.keys.size()
              << " workloads trained on have no recorded family: they are matched by key only "
                 "(a database's workloads take theirs from the --corpus that sampled them; a "
                 "corpus sampled before .keys recorded families must be sampled again)\n";
  return 0;
}

}  // namespace tlmc::driver
