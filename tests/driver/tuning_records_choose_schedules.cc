// Tuning records through the `tlmc` command: `tlmc db import|list|export|prune|check`, and a
// compilation that takes each kernel's schedule from the best record of its workload on
// its target, byte-identical from one run to the next, with a stale record giving way to the
// next that applies (else the -O0 schedule) and bad input refused with its position and
// nothing written.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace tlmc::test {
namespace {

std::string tlmc(const std::string& args) { return std::string(TLMC_EXE) + " " + args; }

const char* const kTiny = R"(tlmc: 1
name: tiny
inputs:
  a: {shape: [16, 32]}
  b: {shape: [32, 64]}
nodes:
  - {op: MatMul, inputs: [a, b], outputs: [c]}
  - {op: Relu, inputs: [c], outputs: [y]}
outputs: [y]
)";

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out + "\"";
}

class TuningRecords : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(dir.file("tiny.yaml"), kTiny);
    CommandResult te =
        run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " --dump=te -o " + dir.file("x")));
    ASSERT_EQ(te.exit_code, 0) << te.out;
    const size_t at = te.out.find("(workload ");
    ASSERT_NE(at, std::string::npos) << te.out;
    key = te.out.substr(at + 10, 16);
    CommandResult t = run_command(tlmc("--print-target --target x86-64-avx2"));
    ASSERT_EQ(t.exit_code, 0) << t.out;
    target = t.out.substr(0, t.out.find('\n'));
    ASSERT_EQ(target.rfind("hw1 isa=avx2 vec=32 ", 0), 0u) << target;
  }
  // A records file with one successful record of `schedule` for the tiny model.
  std::string records_file(const std::string& name, const std::string& schedule,
                           const std::string& seconds = "1e-05") {
    write_file(dir.file(name),
               R"({"format": "tlmc-tuning-records", "version": 1})"
               "\n{\"workload_key\": \"" +
                   key + "\", \"target\": " + json_string(target) + ", \"schedule\": " +
                   json_string(schedule) + ", \"status\": \"ok\", \"seconds\": " + seconds +
                   ", \"reason\": \"\", "
                   "\"measured_at\": \"2026-11-23T10:00:00Z\", \"workload\": \"\"}\n");
    return dir.file(name);
  }
  std::string compile(const std::string& out, const std::string& extra) {
    CommandResult r = run_command(
        tlmc(dir.file("tiny.yaml") + " --target x86-64-avx2 -o " + dir.file(out) + " " + extra));
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return read_file(dir.file(out + "/tiny.c"));
  }
  TempDir dir;
  std::string key, target;
};

TEST_F(TuningRecords, TheBestRecordIsTheKernelsScheduleAtEveryLevel) {
  const std::string db = " --tuning-db " + dir.file("t.db");
  CommandResult imp = run_command(
      tlmc("db import " + records_file("r.jsonl", "tlmc-schedule 1\nvectorize 1 [1]\n") + db));
  ASSERT_EQ(imp.exit_code, 0) << imp.out;
  EXPECT_EQ(imp.out, "imported 1 records into " + dir.file("t.db") + "\n");

  const std::string plain = compile("plain", " -O0");
  const std::string a = compile("a", db + " -O0"), b = compile("b", db + " -O2"),
                    c = compile("c", db + " -O1");
  EXPECT_NE(a.find("vectorize 1 [1]"), std::string::npos) << a;
  EXPECT_EQ(a.find("split"), std::string::npos) << "the -O0 schedule was used";
  EXPECT_NE(plain.find("split"), std::string::npos);
  EXPECT_TRUE(a == b) << "the same record gives the same bytes (-O2 measures nothing more)";
  EXPECT_TRUE(a == c) << "the record beats the language model's schedule";
  CommandResult check =
      run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " --target x86-64-avx2 --check" + db));
  EXPECT_EQ(check.exit_code, 0) << check.out;
  // Another target (threads are part of the descriptor) does not use it.
  EXPECT_NE(compile("other", db + " -O0 --threads 3").find("split"), std::string::npos);
}

TEST_F(TuningRecords, AStaleRecordFallsBackToTheDefaultSchedule) {
  const std::string db = " --tuning-db " + dir.file("t.db");
  ASSERT_EQ(run_command(tlmc("db import " +
                             records_file("r.jsonl", "tlmc-schedule 1\nsplit 1 [0, 32]\n") + db))
                .exit_code,
            0);
  CommandResult r = run_command(
      tlmc("-O0 " + dir.file("tiny.yaml") + " --target x86-64-avx2 -v -o " + dir.file("out") + db));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("tlmc: note: a tuning record of workload " + key +
                       " does not apply (split 1 [0, 32]: factors exceed the extent 16); "
                       "trying the next"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(read_file(dir.file("out/tiny.c")) == compile("plain", " -O0"));
}

// A point of the schedule spaces (format 2) is checked against them before it is used: a
// record imported with a value its space does not list is named and passed over.
TEST_F(TuningRecords, AnImportedPointOutsideTheSpacesIsRefused) {
  const std::string db = " --tuning-db " + dir.file("t.db");
  std::string point = "tlmc-schedule 2\nsketch tile_fused\ntile out i.2 1000\n";
  for (const char* space :
       {"tile out j.2", "tile out i.1", "tile out j.1", "parallel out -", "compute_at matmul -",
        "tile matmul i.1", "tile matmul j.1", "tile matmul k.1", "vectorize matmul -",
        "unroll matmul -", "vectorize out -", "unroll out -"})
    point += std::string(space) + " 1\n";
  ASSERT_EQ(run_command(tlmc("db import " + records_file("r.jsonl", point) + db)).exit_code, 0);
  CommandResult r = run_command(
      tlmc("-O0 " + dir.file("tiny.yaml") + " --target x86-64-avx2 -v -o " + dir.file("out") + db));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("tlmc: note: a tuning record of workload " + key +
                       " does not apply (tile out i.2: 1000 is not a valid value here); "
                       "trying the next"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(read_file(dir.file("out/tiny.c")) == compile("plain", " -O0"));
}

TEST_F(TuningRecords, AStaleFastestRecordGivesWayToTheNextThatApplies) {
  const std::string db = " --tuning-db " + dir.file("t.db");
  ASSERT_EQ(
      run_command(tlmc("db import " +
                       records_file("stale.jsonl", "tlmc-schedule 1\nsplit 1 [0, 32]\n", "1e-06") +
                       " " + records_file("ok.jsonl", "tlmc-schedule 1\nvectorize 1 [1]\n") + db))
          .exit_code,
      0);
  const std::string c = compile("next", db + " -O0");
  EXPECT_NE(c.find("vectorize 1 [1]"), std::string::npos) << c;
  EXPECT_EQ(c.find("split"), std::string::npos) << "the -O0 schedule was used";
}

TEST_F(TuningRecords, DbCommandsListExportPruneAndCheck) {
  const std::string db = " --tuning-db " + dir.file("t.db");
  ASSERT_EQ(run_command(tlmc("db import " +
                             records_file("r.jsonl", "tlmc-schedule 1\nvectorize 1 [1]\n") + db))
                .exit_code,
            0);
  CommandResult list = run_command(tlmc("db list" + db));
  ASSERT_EQ(list.exit_code, 0) << list.out;
  EXPECT_NE(list.out.find("1 records of 1 workload-target pairs"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("target " + target), std::string::npos) << list.out;
  EXPECT_NE(list.out.find(key), std::string::npos) << list.out;
  CommandResult exp = run_command(tlmc("db export -o " + dir.file("back.jsonl") + db));
  ASSERT_EQ(exp.exit_code, 0) << exp.out;
  EXPECT_EQ(read_file(dir.file("back.jsonl")), read_file(dir.file("r.jsonl")));
  CommandResult prune = run_command(tlmc("db prune --keep 1" + db));
  EXPECT_EQ(prune.out, "removed 0 records from " + dir.file("t.db") + "\n");
  CommandResult check = run_command(tlmc("db check" + db));
  EXPECT_EQ(check.exit_code, 0);
  EXPECT_EQ(check.out, dir.file("t.db") + ": ok\n");
}

TEST_F(TuningRecords, BadInputIsRefusedWithNothingWritten) {
  const std::string db = " --tuning-db " + dir.file("t.db");
  write_file(dir.file("bad.jsonl"),
             "{\"format\": \"tlmc-tuning-records\", \"version\": 1}\n{\"workload_key\" 1}\n");
  CommandResult bad = run_command(
      tlmc("db import " + records_file("good.jsonl", "x") + " " + dir.file("bad.jsonl") + db));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.out, dir.file("bad.jsonl") + ":2:17: error: expected ':'\n");
  EXPECT_EQ(count_entries(dir.path()), 4) << "the database was created";  // yaml, x/, 2 files
  write_file(dir.file("text.db"), "not a database at all, only some text for the header\n");
  CommandResult notdb = run_command(tlmc("db list --tuning-db " + dir.file("text.db")));
  EXPECT_EQ(notdb.exit_code, 1);
  EXPECT_EQ(notdb.out,
            dir.file("text.db") + ": error: not a tlmc tuning database (not an SQLite file)\n");
  CommandResult compile = run_command(tlmc("-O0 " + dir.file("tiny.yaml") + " -o " + dir.file("o") +
                                           " --tuning-db " + dir.file("text.db")));
  EXPECT_EQ(compile.exit_code, 1) << compile.out;
  CommandResult usage = run_command(tlmc("db frob" + db));
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.out.find("unknown db command 'frob'"), std::string::npos) << usage.out;
}

}  // namespace
}  // namespace tlmc::test
