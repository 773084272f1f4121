// The tuning database on a real SQLite file: which record wins, how records are ordered,
// pruning, the format and version checks, and the JSON lines export and import.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <sstream>

#include "ir/diagnostic.h"
#include "scheduler/tuning_db.h"
#include "scheduler/tuning_records_json.h"
#include "support/test_support.h"

namespace tlmc::scheduler {
namespace {

using test::TempDir;

TuningRecord ok(const std::string& key, const std::string& schedule, double seconds) {
  return TuningRecord{key, "hw1 isa=avx2", schedule,    MeasureStatus::Ok, seconds,
                      "",  utc_now(),      "stage text"};
}

TuningRecord failed(const std::string& key, const std::string& schedule, MeasureStatus s,
                    const std::string& why) {
  return TuningRecord{key, "hw1 isa=avx2", schedule, s, 0, why, utc_now(), "stage text"};
}

// Runs SQL on the file directly, as another program (or a newer tlmc) would.
void sql(const std::string& path, const std::string& statement) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, statement.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Diagnostic& d) {
    return d.format();
  }
  return "";
}

TEST(TuningDb, TheFastestSuccessWinsAndFailuresNeverDo) {
  TempDir dir;
  TuningDb db = TuningDb::open(dir.file("sub/t.db"), scheduler::DbAccess::Write);
  db.add({ok("k1", "a", 3e-3), ok("k1", "b", 1e-3),
          failed("k1", "c", MeasureStatus::Crashed, "SIGSEGV"), ok("k2", "a", 5e-3),
          ok("k1", "d", 1e-3)});
  std::optional<TuningRecord> best = db.best("k1", "hw1 isa=avx2");
  ASSERT_TRUE(best);
  EXPECT_EQ(best->schedule, "b") << "ties go to the smaller schedule text";
  EXPECT_FALSE(db.best("k1", "hw1 isa=avx512")) << "another target never shares records";
  EXPECT_FALSE(db.best("k3", "hw1 isa=avx2"));
  std::vector<TuningRecord> all = db.records("k1", "hw1 isa=avx2");
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].schedule, "b");
  EXPECT_EQ(all[1].schedule, "d");
  EXPECT_EQ(all[2].schedule, "a");
  EXPECT_EQ(all[3].schedule, "c");
  EXPECT_EQ(all[3].status, MeasureStatus::Crashed);
  EXPECT_EQ(all[3].reason, "SIGSEGV");
}

TEST(TuningDb, ASchedulesRowKeepsItsBestMeasurement) {
  TempDir dir;
  TuningDb db = TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Write);
  db.add({ok("k", "a", 2e-3)});
  db.add({ok("k", "a", 3e-3)});  // slower: ignored
  EXPECT_EQ(db.best("k", "hw1 isa=avx2")->seconds, 2e-3);
  db.add({failed("k", "a", MeasureStatus::TimedOut, "1 s")});  // a failure never replaces a success
  EXPECT_EQ(db.best("k", "hw1 isa=avx2")->seconds, 2e-3);
  db.add({ok("k", "a", 1e-3)});
  EXPECT_EQ(db.best("k", "hw1 isa=avx2")->seconds, 1e-3);
  db.add({failed("k", "x", MeasureStatus::WrongResult, "first"),
          failed("k", "x", MeasureStatus::Crashed, "second")});
  std::vector<TuningRecord> all = db.records("k", "hw1 isa=avx2");
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].reason, "second") << "a newer failure replaces an older one";
  db.add({ok("k", "x", 5e-4)});
  EXPECT_EQ(db.best("k", "hw1 isa=avx2")->schedule, "x") << "a success replaces a failure";
}

TEST(TuningDb, PruneKeepsTheFastestSuccessesPerWorkloadAndTarget) {
  TempDir dir;
  TuningDb db = TuningDb::open(dir.file("t.db"), scheduler::DbAccess::Write);
  db.add({ok("k1", "a", 3e-3), ok("k1", "b", 1e-3), ok("k1", "c", 2e-3),
          failed("k1", "d", MeasureStatus::Crashed, ""), ok("k2", "a", 1e-3)});
  EXPECT_EQ(db.prune(2), 2);
  std::vector<TuningRecord> all = db.all();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].schedule, "b");
  EXPECT_EQ(all[1].schedule, "c");
  EXPECT_EQ(all[2].workload_key, "k2");
  EXPECT_EQ(db.integrity_check(), "ok");
}

TEST(TuningDb, AMissingFileReadWithoutCreateIsEmptyAndNotCreated) {
  TempDir dir;
  TuningDb db = TuningDb::open(dir.file("none.db"), scheduler::DbAccess::Read);
  EXPECT_FALSE(db.best("k", "t"));
  EXPECT_TRUE(db.all().empty());
  EXPECT_EQ(test::count_entries(dir.path()), 0);
}

TEST(TuningDb, OtherFilesAndOtherVersionsAreRefused) {
  TempDir dir;
  test::write_file(dir.file("text.db"), "this is not a database, just some text to read\n");
  EXPECT_EQ(message_of([&] { TuningDb::open(dir.file("text.db"), scheduler::DbAccess::Read); }),
            dir.file("text.db") + ": error: not a tlmc tuning database (not an SQLite file)");
  { TuningDb db = TuningDb::open(dir.file("new.db"), scheduler::DbAccess::Write); }
  // Written by a newer tlmc: the version stored in the file is read back and refused.
  TuningDb::open(dir.file("new.db"), scheduler::DbAccess::Write);
  sql(dir.file("new.db"), "UPDATE meta SET value = '9' WHERE key = 'version'");
  EXPECT_EQ(message_of([&] { TuningDb::open(dir.file("new.db"), scheduler::DbAccess::Read); }),
            dir.file("new.db") +
                ": error: tuning database of version 9, this tlmc reads version 2: use the tlmc "
                "that wrote it, or another --tuning-db");
  sql(dir.file("new.db"), "UPDATE meta SET value = 'x' WHERE key = 'format'");
  EXPECT_EQ(message_of([&] { TuningDb::open(dir.file("new.db"), scheduler::DbAccess::Read); }),
            dir.file("new.db") +
                ": error: not a tlmc tuning database (its format is 'x'): tlmc left it "
                "unchanged; name another --tuning-db");
}

// A database of version 1, as a tlmc before records kept a spread wrote it.
void write_version_one(const std::string& path) {
  sql(path, R"(CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE records(workload_key TEXT NOT NULL, target TEXT NOT NULL, schedule TEXT NOT NULL,
  status TEXT NOT NULL, seconds REAL NOT NULL, reason TEXT NOT NULL, measured_at TEXT NOT NULL,
  workload TEXT NOT NULL, PRIMARY KEY(workload_key, target, schedule));
CREATE INDEX records_by_speed ON records(workload_key, target, status, seconds);
INSERT INTO meta VALUES ('format', 'tlmc-tuning'), ('version', '1');
INSERT INTO records VALUES ('k', 'hw1 isa=avx2', 'fast', 'ok', 1.0, '', 'then', 'stage text');
INSERT INTO records VALUES ('k', 'hw1 isa=avx2', 'slow', 'ok', 2.0, '', 'then', 'stage text');)");
}

// A version-1 database is migrated in place when opened to write: its records keep their
// times, unconfirmed, and it is version 2 from then on.
TEST(TuningDb, AVersionOneDatabaseIsMigratedInPlace) {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  write_version_one(path);
  {
    TuningDb db = TuningDb::open(path, scheduler::DbAccess::Write);
    std::optional<TuningRecord> best = db.best("k", "hw1 isa=avx2");
    ASSERT_TRUE(best);
    EXPECT_EQ(best->schedule, "fast");
    EXPECT_EQ(best->spread, 0);
    // A confirmed record is preferred to a faster unconfirmed one.
    db.confirm(db.records("k", "hw1 isa=avx2")[1], 1.5, 1.2);
    best = db.best("k", "hw1 isa=avx2");
    EXPECT_EQ(best->schedule, "slow");
    EXPECT_EQ(best->seconds, 1.5);
    EXPECT_EQ(best->spread, 1.2);
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  ASSERT_EQ(
      sqlite3_prepare_v2(raw, "SELECT value FROM meta WHERE key = 'version'", -1, &st, nullptr),
      SQLITE_OK);
  ASSERT_EQ(sqlite3_step(st), SQLITE_ROW);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0))), "2");
  sqlite3_finalize(st);
  sqlite3_close(raw);
  // The export carries the spread and reads back exactly.
  std::ostringstream out;
  export_records(out, TuningDb::open(path, scheduler::DbAccess::Read).all());
  std::istringstream in(out.str());
  EXPECT_EQ(import_records(in, "r.jsonl"), TuningDb::open(path, scheduler::DbAccess::Read).all());
}

// Regression: a build that only reads records (-O0, -O1, tlmc db list) switched a tlmc
// database to WAL and migrated it. Opened to read, it is read as it is, byte for byte.
TEST(TuningDb, ADatabaseOpenedToReadIsNeverChanged) {
  TempDir dir;
  const std::string path = dir.file("v1.db");
  write_version_one(path);
  const std::string before = test::read_file(path);
  {
    TuningDb db = TuningDb::open(path, DbAccess::Read);
    const std::optional<TuningRecord> best = db.best("k", "hw1 isa=avx2");
    ASSERT_TRUE(best);
    EXPECT_EQ(best->schedule, "fast");
    EXPECT_EQ(best->spread, 0);
    EXPECT_EQ(db.all().size(), 2u);
    EXPECT_EQ(db.integrity_check(), "ok");
    db.set_fact("cache", "1");  // nothing to do without write access
    EXPECT_FALSE(db.fact("cache"));
    EXPECT_THROW(db.add({ok("k", "new", 0.5)}), InternalError);
  }
  EXPECT_EQ(test::read_file(path), before);
  EXPECT_EQ(test::count_entries(dir.path()), 1);  // no -wal or -shm file beside it
  // A file without tables yet (a writer created it a moment ago) reads as empty.
  test::write_file(dir.file("new.db"), "");
  EXPECT_TRUE(TuningDb::open(dir.file("new.db"), DbAccess::Read).all().empty());
  EXPECT_FALSE(TuningDb::open(dir.file("new.db"), DbAccess::Read).fact("cache"));
  EXPECT_EQ(test::read_file(dir.file("new.db")), "");
  std::filesystem::remove(dir.file("new.db"));
  test::CommandResult r = test::run_command(std::string(TLMC_EXE) + " db list --tuning-db " + path);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(test::read_file(path), before);
  EXPECT_EQ(test::count_entries(dir.path()), 1);
}

// Regression: another application's database in WAL mode, with transactions still in its
// log (the application is running, or was killed), had the log checkpointed into the file
// and deleted by the check that then said it left the file unchanged: the check opened it
// read-write, and closing the last read-write connection checkpoints.
TEST(TuningDb, AnotherProgramsWalDatabaseIsOnlyRead) {
  TempDir dir;
  const std::string app = dir.file("app.sqlite");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the application: writes in WAL mode and dies with the log not merged
    sqlite3* db = nullptr;
    sqlite3_open(app.c_str(), &db);
    sqlite3_exec(db,
                 "PRAGMA journal_mode=WAL; CREATE TABLE users(id INTEGER PRIMARY KEY, name "
                 "TEXT); INSERT INTO users(name) VALUES ('ada'), ('alan')",
                 nullptr, nullptr, nullptr);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  const std::string db_before = test::read_file(app), wal_before = test::read_file(app + "-wal");
  ASSERT_FALSE(wal_before.empty());
  for (DbAccess access : {DbAccess::Read, DbAccess::Write})
    EXPECT_EQ(message_of([&] { TuningDb::open(app, access); }),
              app +
                  ": error: not a tlmc tuning database (an SQLite file with the tables "
                  "users): tlmc left it unchanged; name another --tuning-db");
  for (const char* level : {"-O0", "-O2"}) {
    test::CommandResult r = test::run_command(std::string(TLMC_EXE) + " " + level + " " +
                                              TLMC_SOURCE_DIR + "/examples/mlp.yaml --tuning-db " +
                                              app + " -o " + dir.file("out/libm.a"));
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find("tlmc left it unchanged"), std::string::npos) << r.out;
  }
  EXPECT_EQ(test::read_file(app), db_before);
  EXPECT_EQ(test::read_file(app + "-wal"), wal_before);
}

// Regression: any SQLite file given as the tuning database had its journal mode switched and
// tlmc's tables added before tlmc checked that it was its own.
TEST(TuningDb, AnotherProgramsSqliteFileIsRefusedAndLeftByteForByte) {
  TempDir dir;
  const std::string app = dir.file("app.sqlite");
  sql(app,
      "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); "
      "INSERT INTO users(name) VALUES ('ada'), ('alan')");
  const std::string before = test::read_file(app);
  for (DbAccess access : {DbAccess::Read, DbAccess::Write})
    EXPECT_EQ(message_of([&] { TuningDb::open(app, access); }),
              app +
                  ": error: not a tlmc tuning database (an SQLite file with the tables "
                  "users): tlmc left it unchanged; name another --tuning-db");
  EXPECT_EQ(test::read_file(app), before);
  EXPECT_EQ(test::count_entries(dir.path()), 1);  // no -wal or -shm file beside it
  // The command says the same and exits 1.
  test::CommandResult r = test::run_command(std::string(TLMC_EXE) + " db list --tuning-db " + app);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("not a tlmc tuning database (an SQLite file with the tables users)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(test::read_file(app), before);
  // An empty SQLite file (no tables) is a new database, as a missing one is.
  sql(dir.file("empty.db"), "PRAGMA user_version = 0");
  TuningDb::open(dir.file("empty.db"), scheduler::DbAccess::Write).add({ok("k", "s", 1.0)});
}

// Through the command that would write to it (a build at -O3): a damaged database, one of
// a newer version, and a file that is not a database each stop the build with exit 1 and a
// message that says so, and the file is left byte for byte, with nothing built.
TEST(TuningDb, ADamagedNewerOrForeignFileStopsTheBuildAndIsLeftByteForByte) {
  TempDir dir;
  test::write_file(dir.file("m.yaml"), test::product_softmax_yaml(8, 16, 24));
  const std::string damaged = dir.file("damaged.db"), newer = dir.file("newer.db"),
                    text = dir.file("text.db");
  {
    TuningDb db = TuningDb::open(damaged, DbAccess::Write);
    std::vector<TuningRecord> many;
    for (int i = 0; i < 400; ++i)
      many.push_back(ok("k" + std::to_string(i % 7),
                        std::string(64, 'a' + i % 26) + std::to_string(i), 1e-3 * (i + 1)));
    db.add(many);
  }
  {
    std::string bytes = test::read_file(damaged);
    ASSERT_GT(bytes.size(), 8u * 4096) << "the records span pages";
    for (size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 3);
    test::write_file(damaged, bytes);
  }
  { TuningDb db = TuningDb::open(newer, DbAccess::Write); }
  sql(newer, "UPDATE meta SET value = '9' WHERE key = 'version'");
  test::write_file(text, "this is not a database, just some text to read\n");
  const struct {
    std::string path, message;
  } cases[] = {
      {damaged,
       ": error: tuning database: the file is damaged (SQLite: database disk image is "
       "malformed): tlmc left it unchanged"},
      {newer, ": error: tuning database of version 9, this tlmc reads version 2"},
      {text, ": error: not a tlmc tuning database (not an SQLite file)"},
  };
  for (const auto& c : cases) {
    const std::string before = test::read_file(c.path);
    const test::CommandResult r =
        test::run_command(std::string(TLMC_EXE) + " " + dir.file("m.yaml") +
                          " -O3 --trials 2 --tuning-db " + c.path + " -o " + dir.file("out/lib.a"));
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_NE(r.out.find(c.path + c.message), std::string::npos) << r.out;
    EXPECT_EQ(test::read_file(c.path), before) << c.path << " was changed";
    EXPECT_EQ(test::count_entries(dir.file("out")), 0) << "nothing is built";
  }
}

TEST(TuningRecordsJson, ExportAndImportRoundTripExactly) {
  std::vector<TuningRecord> records = {
      ok("k1", "tlmc-schedule 1\nsplit 1 [0, 4]\n", 1.0 / 3.0),
      failed("k2", "s \"quoted\" \\ back\ttab", MeasureStatus::CompileError, "é ü \x01 ctl"),
  };
  std::ostringstream out;
  export_records(out, records);
  EXPECT_EQ(out.str().substr(0, out.str().find('\n')),
            R"({"format": "tlmc-tuning-records", "version": 1})");
  std::istringstream in(out.str());
  EXPECT_EQ(import_records(in, "r.jsonl"), records);
}

TEST(TuningRecordsJson, MalformedLinesAreReportedAtTheirPosition) {
  const std::string header = R"({"format": "tlmc-tuning-records", "version": 1})"
                             "\n";
  auto error = [](const std::string& text) {
    std::istringstream in(text);
    return message_of([&] { import_records(in, "r.jsonl"); });
  };
  EXPECT_EQ(error(""), "r.jsonl: error: empty file: no tuning-records header");
  EXPECT_EQ(error(R"({"format": "tlmc-tuning-records", "version": 2})"),
            "r.jsonl:1:48: error: tuning records of version 2; this tlmc reads version 1");
  EXPECT_EQ(error(R"({"workload_key": "k"})"),
            "r.jsonl:1:22: error: not a tlmc tuning-records file: the first line must be "
            "{\"format\": \"tlmc-tuning-records\", \"version\": 1}");
  EXPECT_EQ(error(header + R"({"workload_key": "k", )"),
            "r.jsonl:2:23: error: expected a quoted field name");
  EXPECT_EQ(error(header + R"({"workload_key": "k"})"),
            "r.jsonl:2:22: error: missing field 'target'");
  EXPECT_EQ(error(header + R"({"workload_key": 5})"),
            "r.jsonl:2:20: error: field 'workload_key' must be a string");
}

}  // namespace
}  // namespace tlmc::scheduler
