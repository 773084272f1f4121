#include "lm/lineage.h"

#include <cstdlib>
#include <fstream>

#include "ir/te.h"
#include "lm/binary_file.h"

namespace tlmc::lm {
namespace {

const char* const kHeader = "# tlmc lineage ";

bool is_digest(const std::string& s) {
  return s.size() == 16 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The lines a stage's digest covers: its kind, then each subgraph.
std::string stage_lines(const LineageStage& stage) {
  std::string text = "stage " + stage.kind + "\n";
  for (const auto& [key, family] : stage.keys) text.append(key).append("\t").append(family) += '\n';
  return text;
}

std::string next_digest(const std::string& previous, const LineageStage& stage) {
  return ir::text_key(previous + "\n" + stage_lines(stage));
}

}  // namespace

std::string lineage_digest(const Lineage& lineage) {
  std::string digest = lineage.from.value_or("");
  for (const LineageStage& stage : lineage.stages) digest = next_digest(digest, stage);
  return lineage.stages.empty() ? "" : digest;
}

Lineage unlisted_lineage(const std::string& digest, const std::vector<float>& parameters) {
  Lineage out;
  out.from = !digest.empty()
                 ? digest
                 : ir::text_key(std::string(reinterpret_cast<const char*>(parameters.data()),
                                            parameters.size() * sizeof(float)));
  return out;
}

std::string lineage_text(const Lineage& lineage) {
  std::string text = kHeader + std::to_string(kLineageVersion) +
                     ": what a model trained on, stage by stage (docs/lm.md)\n";
  std::string digest = lineage.from.value_or("");
  if (lineage.from) text += "from " + *lineage.from + "\n";
  for (const LineageStage& stage : lineage.stages) {
    digest = next_digest(digest, stage);
    text += stage_lines(stage) + "digest " + digest + "\n";
  }
  return text;
}

void write_lineage(const std::string& path, const Lineage& lineage) {
  const std::string error = write_whole_file(path, lineage_text(lineage), "lineage file");
  if (!error.empty()) throw LineageError(path + ": " + error);
}

Lineage read_lineage(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LineageError(path + ": cannot read the lineage file");
  Lineage out;
  std::string digest;  // up to the last stage closed
  bool open = false;   // a stage whose digest line has not come yet
  int number = 0;
  const auto fail = [&](const std::string& what) {
    return LineageError(path + ":" + std::to_string(number) + ": " + what);
  };
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (number == 1) {
      if (line.rfind(kHeader, 0) != 0)
        throw fail("not a lineage file (tlmc lm pretrain and finetune write them)");
      const int version = std::atoi(line.c_str() + std::string(kHeader).size());
      if (version != kLineageVersion)
        throw fail("lineage format " + std::to_string(version) + ", this tlmc reads " +
                   std::to_string(kLineageVersion));
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("from ", 0) == 0) {
      if (out.from || !out.stages.empty() || !is_digest(line.substr(5)))
        throw fail("'from DIGEST' comes once, before any stage, with 16 hex digits");
      out.from = digest = line.substr(5);
      continue;
    }
    if (line.rfind("stage ", 0) == 0) {
      if (open) throw fail("a stage begins before the last one's digest line");
      out.stages.push_back(LineageStage{line.substr(6), {}});
      open = true;
      continue;
    }
    if (line.rfind("digest ", 0) == 0) {
      if (!open) throw fail("a digest line with no stage before it");
      digest = next_digest(digest, out.stages.back());
      if (line.substr(7) != digest)
        throw fail("the digest " + line.substr(7) + " does not follow from the lists above (" +
                   digest + " does): the lineage was edited or damaged");
      open = false;
      continue;
    }
    const size_t tab = line.find('\t');
    if (!open || tab == std::string::npos || !is_digest(line.substr(0, tab)))
      throw fail("expected 'KEY<tab>FAMILY' inside a stage, or a stage, digest or from line");
    if (!out.stages.back().keys.emplace(line.substr(0, tab), line.substr(tab + 1)).second)
      throw fail("workload key " + line.substr(0, tab) + " is listed twice in its stage");
  }
  if (open) throw fail("the last stage has no digest line: the file was cut short");
  return out;
}

}  // namespace tlmc::lm
