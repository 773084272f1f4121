// The tuning database: measured schedules, one SQLite file (WAL) keyed by workload key and
// hardware descriptor. Shared safely by the tlmc processes of a parallel build; a process
// killed at any moment leaves it intact (SQLite's transactions). Errors opening or writing
// it are user-facing Diagnostics naming the file.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tlmc::scheduler {

enum class MeasureStatus {
  Ok,            // checked against the reference, then timed
  WrongResult,   // ran, and its outputs differ from the reference
  Crashed,       // the run died (a signal, or a non-zero exit)
  TimedOut,      // the run passed its time limit
  CompileError,  // the C compiler rejected it (a compiler bug, recorded all the same)
};
std::string_view measure_status_name(MeasureStatus s);
std::optional<MeasureStatus> parse_measure_status(std::string_view name);

struct TuningRecord {
  std::string workload_key;  // ir::workload_key of the subgraph
  std::string target;        // ir::Target::descriptor() of the machine it was measured on
  std::string schedule;      // the schedule's text
  MeasureStatus status = MeasureStatus::Ok;
  double seconds = 0;       // median run time; Ok only
  std::string reason;       // why, when not Ok
  std::string measured_at;  // UTC, ISO 8601: "2026-11-23T15:04:05Z"
  std::string workload;     // the subgraph as ir::te_to_text writes it (reads back: training)
  // Ok only: the slowest over the fastest of the re-timings that confirmed `seconds` (their
  // median), >= 1; 0 for a time from one measurement, not (yet) confirmed.
  double spread = 0;
  bool operator==(const TuningRecord& o) const;
};

// Per workload and target: how many records, how many failed, the best time.
struct TuningSummary {
  std::string workload_key, target;
  int64_t records = 0, failed = 0;
  double best_seconds = 0;  // 0 when none succeeded
};

// What a TuningDb is opened for.
enum class DbAccess {
  Read,   // reads only: the file is opened read-only and never changed (not even its
          // journal mode or version); a missing file is an empty database
  Write,  // reads and writes: a missing file and its folder are created, the file is
          // switched to WAL, and one of an older format is migrated in place
};

class TuningDb {
 public:
  // Opens the database at `path`. Throws Diagnostic when the file is not a tlmc tuning
  // database (which is then left as it was), or is of a newer format.
  static TuningDb open(const std::string& path, DbAccess access);
  // How many times this process has called open (a build opens its database once).
  static int64_t opened();
  ~TuningDb();
  TuningDb(TuningDb&&) noexcept;
  TuningDb& operator=(TuningDb&&) noexcept;

  const std::string& path() const;
  // The fastest successful record among the confirmed ones (spread > 0), else the fastest
  // (ties: the smaller schedule text); nullopt when none.
  std::optional<TuningRecord> best(const std::string& workload_key,
                                   const std::string& target) const;
  // Every record of one workload on one target, successes first (confirmed ones first,
  // then each group fastest first), then failures.
  std::vector<TuningRecord> records(const std::string& workload_key,
                                    const std::string& target) const;
  std::vector<TuningRecord> all() const;  // ordered by workload, target, then as records()
  std::vector<TuningSummary> summary() const;
  // Adds records in one transaction. A schedule already recorded for the workload and
  // target keeps one row: a success beats a failure, the faster of two successes wins, a
  // newer failure replaces an older one.
  void add(const std::vector<TuningRecord>& records);
  // Sets the time and spread of a successful record from its confirming re-timings.
  void confirm(const TuningRecord& record, double seconds, double spread);
  // Keeps, per workload and target, the `keep` fastest successes; returns rows removed.
  // add, confirm and prune need DbAccess::Write; set_fact does nothing without it.
  int64_t prune(int64_t keep);
  // SQLite's integrity check: "ok", or what it found.
  std::string integrity_check() const;
  // Facts measured about a machine, kept beside its records so that every later build with
  // this database decides the same (the shared cache's size, keyed by the descriptor).
  std::optional<std::string> fact(const std::string& key) const;
  void set_fact(const std::string& key, const std::string& value);

  struct Impl;  // the SQLite connection; defined in tuning_db.cc

 private:
  explicit TuningDb(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The default database: $TLMC_TUNING_DB, else $XDG_CACHE_HOME/tlmc/tuning.db, else
// $HOME/.cache/tlmc/tuning.db.
std::string default_tuning_db_path();

// The current time as TuningRecord::measured_at wants it.
std::string utc_now();

}  // namespace tlmc::scheduler
