// -O1 and -O2 through the real command, with the bundled language model: -O1 writes the
// model's likeliest schedules (checked against the reference, the same bytes every time,
// nothing measured); -O2, the default, measures the model's proposals, records them with the
// subgraph's program, and a second run uses the records as they are. A model file that is
// not one is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "ir/target.h"
#include "ir/te_text.h"
#include "scheduler/tuning_db.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

std::string tlmc(const std::string& args) { return std::string(TLMC_EXE) + " " + args; }

const std::string kModel = product_softmax_yaml(12, 40, 24);

TEST(LanguageModelLevels, O1WritesTheModelsScheduleCheckedAndDeterministic) {
  TempDir dir;
  write_file(dir.file("small.yaml"), kModel);
  const std::string db = " --tuning-db " + dir.file("t.db");
  CommandResult check = run_command(tlmc(dir.file("small.yaml") + " -O1 --check" + db));
  EXPECT_EQ(check.exit_code, 0) << check.out;
  EXPECT_NE(check.out.find("check passed"), std::string::npos) << check.out;
  for (const char* out : {"a", "b"}) {
    CommandResult r =
        run_command(tlmc(dir.file("small.yaml") + " -O1 --emit=source -o " + dir.file(out) + db));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("tlmc: -O1: 2 kernels (0 from tuning records) in "), std::string::npos)
        << r.out;
  }
  EXPECT_TRUE(read_file(dir.file("a/small.c")) == read_file(dir.file("b/small.c")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("t.db"))) << "-O1 measures and records nothing";
}

TEST(LanguageModelLevels, O2IsTheDefaultMeasuresRecordsAndThenUsesTheRecords) {
  if (!ir::parse_target("host")->runs_here) GTEST_SKIP() << "-O2 measures on this machine";
  TempDir dir;
  write_file(dir.file("small.yaml"), kModel);
  const std::string db = " --tuning-db " + dir.file("t.db");
  CommandResult first = run_command(
      tlmc(dir.file("small.yaml") + " --trials 6 --emit=source -o " + dir.file("a") + db));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  EXPECT_NE(first.out.find("tlmc: tuned 2 subgraphs with 6 trials"), std::string::npos)
      << first.out;
  EXPECT_NE(first.out.find("tlmc: -O2: 2 kernels (2 from tuning records) in "), std::string::npos)
      << first.out;
  const std::vector<scheduler::TuningRecord> records =
      scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Read).all();
  ASSERT_EQ(records.size(), 8u) << "two baselines and six trials";
  for (const scheduler::TuningRecord& r : records) {
    const ir::TeProgram program = ir::te_from_text(r.workload);
    EXPECT_EQ(ir::workload_key(program), r.workload_key) << "the record keeps its subgraph";
  }
  CommandResult again =
      run_command(tlmc(dir.file("small.yaml") + " --emit=source -o " + dir.file("b") + db));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_EQ(again.out.find("tlmc: tuned"), std::string::npos) << "nothing is measured again";
  EXPECT_TRUE(read_file(dir.file("a/small.c")) == read_file(dir.file("b/small.c")));
  CommandResult check = run_command(tlmc(dir.file("small.yaml") + " --check" + db));
  EXPECT_EQ(check.exit_code, 0) << check.out;
}

// --progress: a line per tuning round, with where the time went so far, where stderr is no
// terminal (a log); without it, the summary alone.
TEST(LanguageModelLevels, ProgressPrintsALinePerRoundWithItsPhases) {
  if (!ir::parse_target("host")->runs_here) GTEST_SKIP() << "-O2 measures on this machine";
  TempDir dir;
  write_file(dir.file("small.yaml"), kModel);
  const std::string run = dir.file("small.yaml") + " --trials 4 --emit=source -o " + dir.file("a") +
                          " --tuning-db " + dir.file("t.db");
  CommandResult with = run_command(tlmc(run + " --progress 2>&1"));
  ASSERT_EQ(with.exit_code, 0) << with.out;
  size_t lines = 0;
  std::istringstream out(with.out);
  for (std::string line; std::getline(out, line);) {
    if (line.rfind("tlmc: task ", 0) != 0) continue;
    ++lines;
    EXPECT_NE(line.find(" trials, about "), std::string::npos) << line;
    EXPECT_NE(line.find(" s left (proposing "), std::string::npos) << line;
    EXPECT_NE(line.find(" s, compiling "), std::string::npos) << line;
    EXPECT_NE(line.find(" s, running "), std::string::npos) << line;
    EXPECT_EQ(line.find('\r'), std::string::npos) << "a line each, not rewritten";
  }
  EXPECT_EQ(lines, 2u) << with.out;  // a first round for each of the two subgraphs
  std::filesystem::remove_all(dir.file("a"));
  CommandResult without =
      run_command(tlmc(dir.file("small.yaml") + " --trials 4 --emit=source -o " + dir.file("a") +
                       " --tuning-db " + dir.file("u.db") + " 2>&1"));
  ASSERT_EQ(without.exit_code, 0) << without.out;
  EXPECT_EQ(without.out.find("tlmc: task "), std::string::npos) << without.out;
  EXPECT_NE(without.out.find("tlmc: tuned 2 subgraphs with 4 trials"), std::string::npos)
      << without.out;
}

// --tune-only KEY: a benchmark tunes one subgraph of a model; the others keep the -O0
// schedule. A key the model lacks is refused before anything is measured.
TEST(LanguageModelLevels, TuneOnlyTunesTheNamedSubgraphAlone) {
  if (!ir::parse_target("host")->runs_here) GTEST_SKIP() << "-O2 measures on this machine";
  TempDir dir;
  write_file(dir.file("small.yaml"), kModel);
  const std::string db = " --tuning-db " + dir.file("t.db");
  CommandResult te = run_command(
      tlmc(dir.file("small.yaml") + " -O0 --dump te --emit=source -o " + dir.file("s") + db));
  ASSERT_EQ(te.exit_code, 0) << te.out;
  const size_t at = te.out.find("(workload ");
  ASSERT_NE(at, std::string::npos) << te.out;
  const std::string key = te.out.substr(at + 10, 16);
  CommandResult tuned = run_command(tlmc(dir.file("small.yaml") + " --trials 3 --tune-only " + key +
                                         " --emit=source -o " + dir.file("a") + db));
  ASSERT_EQ(tuned.exit_code, 0) << tuned.out;
  EXPECT_NE(tuned.out.find("tlmc: tuned 1 subgraph"), std::string::npos) << tuned.out;
  EXPECT_NE(tuned.out.find("tlmc: -O2: 2 kernels (1 from tuning records) in "), std::string::npos)
      << tuned.out;
  for (const scheduler::TuningRecord& r :
       scheduler::TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Read).all())
    EXPECT_EQ(r.workload_key, key);
  CommandResult unknown =
      run_command(tlmc(dir.file("small.yaml") + " -O3 --tune-only " +
                       "0123456789abcdef --emit=source -o " + dir.file("b") + db));
  EXPECT_EQ(unknown.exit_code, 1) << unknown.out;
  EXPECT_NE(unknown.out.find("--tune-only 0123456789abcdef: no subgraph of the model has this "
                             "workload key (--dump te lists them)"),
            std::string::npos)
      << unknown.out;
  EXPECT_FALSE(std::filesystem::exists(dir.file("b"))) << "nothing is written";
}

TEST(LanguageModelLevels, O2ForATargetThatCannotRunHereIsO1WithANote) {
  const char* other = nullptr;
  for (const char* t : {"x86-64-avx512", "x86-64-avx2"})
    if (!ir::parse_target(t)->runs_here) other = t;
  if (!other) GTEST_SKIP() << "this machine runs every x86-64 target";
  TempDir dir;
  write_file(dir.file("small.yaml"), kModel);
  CommandResult r = run_command(tlmc(dir.file("small.yaml") + " --target " + other + " -o " +
                                     dir.file("libs.a") + " --tuning-db " + dir.file("t.db")));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("compiling at -O1 (the language model's schedules, unmeasured)"),
            std::string::npos)
      << r.out;
}

// The baseline the model is benchmarked against: -O3's search seeded by uniform samples reads
// no model (a file that is not one goes unnoticed), where the seeded search refuses it.
TEST(LanguageModelLevels, UnseededSearchReadsNoModel) {
  if (!ir::parse_target("host")->runs_here) GTEST_SKIP() << "-O3 measures on this machine";
  TempDir dir;
  write_file(dir.file("small.yaml"), kModel);
  write_file(dir.file("bad.tlm"), "not a model");
  const std::string args = dir.file("small.yaml") + " -O3 --trials 4 --activation-layout model" +
                           " --lm-model " + dir.file("bad.tlm") + " --tuning-db " +
                           dir.file("t.db") + " --emit=source -o ";
  CommandResult unseeded = run_command(tlmc(args + dir.file("a") + " --search unseeded"));
  ASSERT_EQ(unseeded.exit_code, 0) << unseeded.out;
  EXPECT_NE(unseeded.out.find("tlmc: tuned 2 subgraphs with 4 trials"), std::string::npos)
      << unseeded.out;
  CommandResult seeded = run_command(tlmc(args + dir.file("b") + " --search evolutionary"));
  EXPECT_EQ(seeded.exit_code, 1) << seeded.out;
  EXPECT_EQ(seeded.out, "tlmc: error: " + dir.file("bad.tlm") + ": not a tlmc model file\n");
}

TEST(LanguageModelLevels, AFileThatIsNotAModelIsRefused) {
  TempDir dir;
  write_file(dir.file("small.yaml"), kModel);
  write_file(dir.file("bad.tlm"), "not a model");
  CommandResult r = run_command(tlmc(dir.file("small.yaml") + " -O1 --lm-model " +
                                     dir.file("bad.tlm") + " -o " + dir.file("o")));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(r.out, "tlmc: error: " + dir.file("bad.tlm") + ": not a tlmc model file\n");
  EXPECT_FALSE(std::filesystem::exists(dir.file("o")));
}

}  // namespace
}  // namespace tlmc::test
