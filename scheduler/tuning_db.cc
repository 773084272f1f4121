#include "scheduler/tuning_db.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <thread>

#include "ir/diagnostic.h"

namespace tlmc::scheduler {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFormat = "tlmc-tuning";
// Version 2 added records.spread; a version-1 file is migrated in place when opened to write,
// and read as it is otherwise.
constexpr int kVersion = 2;
// A writer waits this long for another process's transaction before giving up.
constexpr int kBusyTimeoutMs = 120000;

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records(
  workload_key TEXT NOT NULL,
  target TEXT NOT NULL,
  schedule TEXT NOT NULL,
  status TEXT NOT NULL,
  seconds REAL NOT NULL,
  reason TEXT NOT NULL,
  measured_at TEXT NOT NULL,
  workload TEXT NOT NULL,
  spread REAL NOT NULL DEFAULT 0,
  PRIMARY KEY(workload_key, target, schedule));
CREATE INDEX IF NOT EXISTS records_by_speed ON records(workload_key, target, status, seconds);
)";

// Records of one workload and target as records() orders them.
constexpr const char* kOrder =
    " ORDER BY workload_key, target, status <> 'ok', spread = 0, seconds, schedule";
constexpr const char* kColumns =
    "SELECT workload_key, target, schedule, status, seconds, reason, measured_at, workload, "
    "spread FROM records";
// A version-1 file opened to read: it has no spread column, and every time in it came from
// one measurement (what a migration writes).
constexpr const char* kVersion1Columns =
    "SELECT workload_key, target, schedule, status, seconds, reason, measured_at, workload, "
    "0 AS spread FROM records";

}  // namespace

struct TuningDb::Impl {
  std::string path;
  sqlite3* db = nullptr;   // null: a missing file opened to read (empty, never written)
  bool writable = false;   // opened with DbAccess::Write (WAL, migrated to this version)
  bool has_spread = true;  // false: a version-1 file, read where it is, spread read as 0
  ~Impl() { sqlite3_close(db); }

  [[noreturn]] void fail(const std::string& what) const {
    // SQLite finds damage where it reads, and stops before any change reaches the file.
    if (db && (sqlite3_errcode(db) == SQLITE_CORRUPT || sqlite3_errcode(db) == SQLITE_NOTADB))
      throw Diagnostic({path}, "tuning database: the file is damaged (SQLite: " +
                                   std::string(sqlite3_errmsg(db)) +
                                   "): tlmc left it unchanged; restore it from a copy, or name "
                                   "another --tuning-db");
    const std::string detail = db ? std::string(": ") + sqlite3_errmsg(db) : "";
    throw Diagnostic({path}, "tuning database: " + what + detail);
  }
  void exec(const char* sql) const {
    char* err = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string msg = err ? err : "unknown error";
      sqlite3_free(err);
      throw Diagnostic({path}, "tuning database: " + msg +
                                   " (while running: " + std::string(sql).substr(0, 60) + ")");
    }
  }
};

namespace {

// A prepared statement, finalised on scope exit.
class Statement {
 public:
  Statement(const TuningDb::Impl& impl, const std::string& sql) : impl_(impl) {
    if (sqlite3_prepare_v2(impl.db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      impl.fail("cannot prepare a query");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  void bind(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, double v) { sqlite3_bind_double(stmt_, i, v); }
  void bind(int i, int64_t v) { sqlite3_bind_int64(stmt_, i, v); }
  // True while there is a row.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) impl_.fail("query failed");
    return false;
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string text(int i) const {
    const unsigned char* t = sqlite3_column_text(stmt_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  double real(int i) const { return sqlite3_column_double(stmt_, i); }
  int64_t integer(int i) const { return sqlite3_column_int64(stmt_, i); }

 private:
  const TuningDb::Impl& impl_;
  sqlite3_stmt* stmt_ = nullptr;
};

TuningRecord read_record(const TuningDb::Impl& impl, const Statement& s) {
  TuningRecord r;
  r.workload_key = s.text(0);
  r.target = s.text(1);
  r.schedule = s.text(2);
  const std::optional<MeasureStatus> status = parse_measure_status(s.text(3));
  if (!status) impl.fail("a record has the unknown status '" + s.text(3) + "'");
  r.status = *status;
  r.seconds = s.real(4);
  r.reason = s.text(5);
  r.measured_at = s.text(6);
  r.workload = s.text(7);
  r.spread = s.real(8);
  return r;
}

std::vector<TuningRecord> query(const TuningDb::Impl& impl, const std::string& where,
                                const std::vector<std::string>& args) {
  std::vector<TuningRecord> out;
  if (!impl.db) return out;
  Statement s(impl, std::string(impl.has_spread ? kColumns : kVersion1Columns) + where + kOrder);
  for (size_t i = 0; i < args.size(); ++i) s.bind(static_cast<int>(i) + 1, args[i]);
  while (s.step()) out.push_back(read_record(impl, s));
  return out;
}

enum class FileState { Empty, Current, Older };

// Reads, writing nothing, whether the file is empty (no tables: a new database), a tlmc
// tuning database of this version, or one of an older version that this tlmc migrates;
// refuses anything else, so that tlmc never changes a file that is not its own (an
// application's SQLite file given by mistake stays as it was).
FileState check_own_file(const TuningDb::Impl& impl) {
  std::vector<std::string> tables;
  {
    Statement s(impl, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    while (s.step()) tables.push_back(s.text(0));
  }
  if (tables.empty()) return FileState::Empty;
  if (std::find(tables.begin(), tables.end(), "meta") == tables.end() ||
      std::find(tables.begin(), tables.end(), "records") == tables.end()) {
    std::string list;
    for (size_t i = 0; i < tables.size() && i < 5; ++i) list += (i ? ", " : "") + tables[i];
    if (tables.size() > 5) list += ", ...";
    throw Diagnostic({impl.path}, "not a tlmc tuning database (an SQLite file with the tables " +
                                      list + "): tlmc left it unchanged; name another --tuning-db");
  }
  std::string format, version;
  Statement get(impl, "SELECT key, value FROM meta");
  while (get.step()) {
    if (get.text(0) == "format") format = get.text(1);
    if (get.text(0) == "version") version = get.text(1);
  }
  if (format != kFormat)
    throw Diagnostic({impl.path}, "not a tlmc tuning database (its format is '" + format +
                                      "'): tlmc left it unchanged; name another --tuning-db");
  if (version == "1") return FileState::Older;
  if (version != std::to_string(kVersion))
    throw Diagnostic({impl.path}, "tuning database of version " + version +
                                      ", this tlmc reads version " + std::to_string(kVersion) +
                                      ": use the tlmc that wrote it, or another --tuning-db");
  return FileState::Current;
}

// Writes the schema and the format's name and version into a new (empty) file, or migrates
// an older one. Another process may have done either in the meantime: the check is
// repeated inside the transaction.
void prepare(TuningDb::Impl& impl) {
  impl.exec("BEGIN IMMEDIATE");
  try {
    switch (check_own_file(impl)) {
      case FileState::Empty: {
        impl.exec(kSchema);
        Statement put(impl, "INSERT INTO meta(key, value) VALUES ('format', ?1), ('version', ?2)");
        put.bind(1, std::string(kFormat));
        put.bind(2, std::to_string(kVersion));
        put.step();
        break;
      }
      case FileState::Older:
        // Version 1 to 2: every time so far came from one measurement, none confirmed.
        impl.exec("ALTER TABLE records ADD COLUMN spread REAL NOT NULL DEFAULT 0");
        impl.exec("UPDATE meta SET value = '2' WHERE key = 'version'");
        break;
      case FileState::Current:
        break;
    }
    impl.exec("COMMIT");
  } catch (...) {
    sqlite3_exec(impl.db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

}  // namespace

std::string_view measure_status_name(MeasureStatus s) {
  switch (s) {
    case MeasureStatus::Ok:
      return "ok";
    case MeasureStatus::WrongResult:
      return "wrong_result";
    case MeasureStatus::Crashed:
      return "crashed";
    case MeasureStatus::TimedOut:
      return "timed_out";
    case MeasureStatus::CompileError:
      return "compile_error";
  }
  return "";
}

std::optional<MeasureStatus> parse_measure_status(std::string_view name) {
  for (MeasureStatus s : {MeasureStatus::Ok, MeasureStatus::WrongResult, MeasureStatus::Crashed,
                          MeasureStatus::TimedOut, MeasureStatus::CompileError})
    if (measure_status_name(s) == name) return s;
  return std::nullopt;
}

bool TuningRecord::operator==(const TuningRecord& o) const {
  return workload_key == o.workload_key && target == o.target && schedule == o.schedule &&
         status == o.status && seconds == o.seconds && reason == o.reason &&
         measured_at == o.measured_at && workload == o.workload && spread == o.spread;
}

TuningDb::TuningDb(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TuningDb::~TuningDb() = default;
TuningDb::TuningDb(TuningDb&&) noexcept = default;
TuningDb& TuningDb::operator=(TuningDb&&) noexcept = default;

namespace {
std::atomic<int64_t> opened_count{0};
}  // namespace

int64_t TuningDb::opened() { return opened_count.load(); }

namespace {

// Opens the file as SQLite with `flags`; a file that is not SQLite is refused by name.
void open_sqlite(TuningDb::Impl& impl, int flags) {
  if (sqlite3_open_v2(impl.path.c_str(), &impl.db, flags, nullptr) != SQLITE_OK)
    impl.fail("cannot open");
  sqlite3_busy_timeout(impl.db, kBusyTimeoutMs);
  if (sqlite3_exec(impl.db, "SELECT COUNT(*) FROM sqlite_master", nullptr, nullptr, nullptr) ==
      SQLITE_NOTADB)
    throw Diagnostic({impl.path}, "not a tlmc tuning database (not an SQLite file)");
}

// Switches the file to write-ahead logging: readers never block the writer; each
// transaction is durable once committed. The switch of a new file needs it alone, and SQLite
// does not wait for that by itself: the processes of a parallel build that create it at
// once take turns here.
void use_write_ahead_log(TuningDb::Impl& impl) {
  for (int waited_ms = 0;; waited_ms += 5) {
    char* mode = nullptr;
    const int rc = sqlite3_exec(
        impl.db, "PRAGMA journal_mode=WAL",
        [](void* out, int, char** values, char**) {
          *static_cast<char**>(out) = sqlite3_mprintf("%s", values[0] ? values[0] : "");
          return 0;
        },
        &mode, nullptr);
    const bool wal = rc == SQLITE_OK && mode && std::string(mode) == "wal";
    sqlite3_free(mode);
    if (wal) return;
    if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED && rc != SQLITE_OK)
      impl.fail("cannot switch to write-ahead logging");
    if (waited_ms >= kBusyTimeoutMs) impl.fail("cannot switch to write-ahead logging");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

// The file is first opened read-only and checked: a read-write connection alone changes a
// file (closing the last one checkpoints a WAL file into it and deletes the log), so
// another application's database given by mistake is only ever read.
TuningDb TuningDb::open(const std::string& path, DbAccess access) {
  ++opened_count;
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (access == DbAccess::Read && !exists) return TuningDb(std::move(impl));
  if (exists) {
    open_sqlite(*impl, SQLITE_OPEN_READONLY);
    const FileState state = check_own_file(*impl);
    if (access == DbAccess::Read) {
      impl->has_spread = state != FileState::Older;
      if (state == FileState::Empty) {  // no tables yet (a new file): as a missing one
        sqlite3_close(impl->db);
        impl->db = nullptr;
      }
      return TuningDb(std::move(impl));
    }
    sqlite3_close(impl->db);
    impl->db = nullptr;
  } else {
    const fs::path dir = fs::path(path).parent_path();
    if (!dir.empty()) fs::create_directories(dir, ec);
    if (ec)
      throw Diagnostic({path}, "cannot create the folder of the tuning database: " + ec.message());
  }
  open_sqlite(*impl, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  impl->writable = true;
  check_own_file(*impl);  // again: another process may have replaced the file meanwhile
  use_write_ahead_log(*impl);
  impl->exec("PRAGMA synchronous=NORMAL");
  prepare(*impl);
  return TuningDb(std::move(impl));
}

const std::string& TuningDb::path() const { return impl_->path; }

std::optional<TuningRecord> TuningDb::best(const std::string& workload_key,
                                           const std::string& target) const {
  std::vector<TuningRecord> r = query(
      *impl_, " WHERE workload_key = ?1 AND target = ?2 AND status = 'ok'", {workload_key, target});
  if (r.empty()) return std::nullopt;
  return r.front();
}

std::vector<TuningRecord> TuningDb::records(const std::string& workload_key,
                                            const std::string& target) const {
  return query(*impl_, " WHERE workload_key = ?1 AND target = ?2", {workload_key, target});
}

std::vector<TuningRecord> TuningDb::all() const { return query(*impl_, "", {}); }

std::vector<TuningSummary> TuningDb::summary() const {
  std::vector<TuningSummary> out;
  if (!impl_->db) return out;
  Statement s(*impl_,
              "SELECT workload_key, target, COUNT(*), SUM(status <> 'ok'), "
              "MIN(CASE WHEN status = 'ok' THEN seconds END) FROM records "
              "GROUP BY workload_key, target ORDER BY target, workload_key");
  while (s.step()) out.push_back({s.text(0), s.text(1), s.integer(2), s.integer(3), s.real(4)});
  return out;
}

void TuningDb::add(const std::vector<TuningRecord>& records) {
  if (!impl_->writable) throw InternalError("adding records to a tuning database opened to read");
  impl_->exec("BEGIN IMMEDIATE");
  try {
    Statement s(*impl_, R"(
INSERT INTO records(workload_key, target, schedule, status, seconds, reason, measured_at, workload,
                    spread)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
ON CONFLICT(workload_key, target, schedule) DO UPDATE SET
  status = excluded.status, seconds = excluded.seconds, reason = excluded.reason,
  measured_at = excluded.measured_at, workload = excluded.workload, spread = excluded.spread
WHERE (excluded.status = 'ok' AND (records.status <> 'ok' OR excluded.seconds < records.seconds))
   OR (excluded.status <> 'ok' AND records.status <> 'ok'))");
    for (const TuningRecord& r : records) {
      s.bind(1, r.workload_key);
      s.bind(2, r.target);
      s.bind(3, r.schedule);
      s.bind(4, std::string(measure_status_name(r.status)));
      s.bind(5, r.status == MeasureStatus::Ok ? r.seconds : 0.0);
      s.bind(6, r.reason);
      s.bind(7, r.measured_at);
      s.bind(8, r.workload);
      s.bind(9, r.status == MeasureStatus::Ok ? r.spread : 0.0);
      s.step();
      s.reset();
    }
    impl_->exec("COMMIT");
  } catch (...) {
    sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

void TuningDb::confirm(const TuningRecord& record, double seconds, double spread) {
  if (!impl_->writable)
    throw InternalError("confirming a record of a tuning database opened to read");
  Statement s(*impl_,
              "UPDATE records SET seconds = ?1, spread = ?2, measured_at = ?3 WHERE workload_key = "
              "?4 AND target = ?5 AND schedule = ?6 AND status = 'ok'");
  s.bind(1, seconds);
  s.bind(2, spread);
  s.bind(3, utc_now());
  s.bind(4, record.workload_key);
  s.bind(5, record.target);
  s.bind(6, record.schedule);
  s.step();
}

int64_t TuningDb::prune(int64_t keep) {
  if (!impl_->writable) throw InternalError("pruning a tuning database opened to read");
  impl_->exec("BEGIN IMMEDIATE");
  try {
    Statement s(*impl_, R"(
DELETE FROM records WHERE rowid NOT IN (
  SELECT rowid FROM (
    SELECT rowid, ROW_NUMBER() OVER (PARTITION BY workload_key, target
                                     ORDER BY spread = 0, seconds, schedule) AS rank
    FROM records WHERE status = 'ok')
  WHERE rank <= ?1))");
    s.bind(1, keep);
    s.step();
    const int64_t removed = sqlite3_changes64(impl_->db);
    impl_->exec("COMMIT");
    return removed;
  } catch (...) {
    sqlite3_exec(impl_->db, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

std::string TuningDb::integrity_check() const {
  if (!impl_->db) return "ok";
  Statement s(*impl_, "PRAGMA integrity_check");
  std::string out;
  while (s.step()) out += (out.empty() ? "" : "\n") + s.text(0);
  return out;
}

std::optional<std::string> TuningDb::fact(const std::string& key) const {
  if (!impl_->db) return std::nullopt;
  Statement s(*impl_, "SELECT value FROM meta WHERE key = ?1");
  s.bind(1, "fact " + key);
  if (!s.step()) return std::nullopt;
  return s.text(0);
}

void TuningDb::set_fact(const std::string& key, const std::string& value) {
  if (!impl_->writable) return;
  Statement s(*impl_, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)");
  s.bind(1, "fact " + key);
  s.bind(2, value);
  s.step();
}

std::string default_tuning_db_path() {
  if (const char* p = std::getenv("TLMC_TUNING_DB"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return (fs::path(x) / "tlmc" / "tuning.db").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home && *home ? home : ".") / ".cache" / "tlmc" / "tuning.db").string();
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace tlmc::scheduler
