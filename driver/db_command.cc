#include "driver/db_command.h"

#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "driver/db_retime.h"
#include "driver/output_files.h"
#include "driver/subcommand_words.h"
#include "ir/diagnostic.h"
#include "scheduler/tuning_db.h"
#include "scheduler/tuning_records_json.h"

namespace tlmc::driver {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;
using scheduler::TuningDb;

constexpr const char* kUsage =
    "Usage: tlmc db list   [--tuning-db FILE]\n"
    "       tlmc db export [--tuning-db FILE] [-o FILE]\n"
    "       tlmc db import FILE... [--tuning-db FILE]\n"
    "       tlmc db prune  [--keep N] [--tuning-db FILE]\n"
    "       tlmc db check  [--tuning-db FILE]\n"
    "       tlmc db retime MODEL DB... [--only KEY,...] [--rounds R] [--threads N]\n"
    "                                  [--without-o0]\n\n"
    "Reads and keeps the tuning database (default: $TLMC_TUNING_DB, else\n"
    "$XDG_CACHE_HOME/tlmc/tuning.db, else ~/.cache/tlmc/tuning.db).\n"
    "  list    each workload and target: records, failures, best time\n"
    "  export  every record as JSON lines (stdout, or -o FILE)\n"
    "  import  adds the records of files written by export\n"
    "  prune   keeps the N fastest successful records per workload and target (default 1)\n"
    "  check   SQLite's integrity check of the file\n"
    "  retime  times again, side by side in one process, each kernel of MODEL with the -O0\n"
    "          schedule and with each DB's best schedule (--without-o0: the best but the\n"
    "          -O0 schedule's record), R rounds (default 5) each candidate in turn; prints\n"
    "          the least of the rounds' medians, in microseconds\n";

void list(const TuningDb& db) {
  const std::vector<scheduler::TuningSummary> rows = db.summary();
  int64_t records = 0;
  for (const auto& r : rows) records += r.records;
  std::cout << "tuning database " << db.path() << ": " << records << " records of " << rows.size()
            << " workload-target pairs\n";
  std::string target;
  for (const auto& r : rows) {
    if (r.target != target) {
      target = r.target;
      std::cout << "target " << target << "\n";
      std::printf("  %-16s %8s %7s %12s\n", "workload", "records", "failed", "best ms");
    }
    const std::string best = r.best_seconds > 0 ? std::to_string(r.best_seconds * 1e3) : "-";
    std::printf("  %-16s %8lld %7lld %12s\n", r.workload_key.c_str(),
                static_cast<long long>(r.records), static_cast<long long>(r.failed), best.c_str());
  }
}

}  // namespace

int run_db_command(const std::vector<std::string>& args) {
  po::options_description opts;
  opts.add_options()("tuning-db", po::value<std::string>())("output,o", po::value<std::string>())(
      "keep", po::value<int64_t>()->default_value(1))("only", po::value<std::string>())(
      "rounds", po::value<int>()->default_value(5))("threads", po::value<int>()->default_value(0))(
      "without-o0", po::bool_switch());
  po::variables_map vm;
  const std::vector<std::string> words = parse_subcommand(args, opts, vm);
  if (std::optional<int> status = usage_asked(vm, words, kUsage)) return *status;
  const std::string& verb = words[0];
  const std::string path = vm.count("tuning-db") ? vm["tuning-db"].as<std::string>()
                                                 : scheduler::default_tuning_db_path();
  if (verb == "retime") {
    if (words.size() < 3) throw std::invalid_argument("tlmc db retime needs a model and databases");
    RetimeOptions o;
    o.model = words[1];
    o.databases.assign(words.begin() + 2, words.end());
    o.rounds = vm["rounds"].as<int>();
    o.threads = vm["threads"].as<int>();
    o.without_o0 = vm["without-o0"].as<bool>();
    if (o.rounds < 1 || o.threads < 0)
      throw std::invalid_argument("--rounds takes a count >= 1, --threads one >= 0");
    if (vm.count("only")) {
      std::istringstream keys(vm["only"].as<std::string>());
      for (std::string key; std::getline(keys, key, ',');)
        if (!key.empty()) o.only.push_back(key);
    }
    return retime(o);
  }
  if (verb != "import" && words.size() > 1)
    throw std::invalid_argument("tlmc db " + verb + " takes no file arguments");
  if (verb == "list") {
    list(TuningDb::open(path, scheduler::DbAccess::Read));
    return 0;
  }
  if (verb == "export") {
    const std::vector<scheduler::TuningRecord> records =
        TuningDb::open(path, scheduler::DbAccess::Read).all();
    if (!vm.count("output")) {
      scheduler::export_records(std::cout, records);
      return 0;
    }
    std::ostringstream text;
    scheduler::export_records(text, records);
    replace_file(vm["output"].as<std::string>(), text.str(), "the exported records");
    return 0;
  }
  if (verb == "import") {
    if (words.size() < 2) throw std::invalid_argument("tlmc db import needs a records file");
    // Every file is read and checked before anything is written: all or nothing.
    std::vector<scheduler::TuningRecord> records;
    for (size_t i = 1; i < words.size(); ++i) {
      std::ifstream f(words[i]);
      if (!f) throw Diagnostic({words[i]}, "cannot read the records file");
      std::vector<scheduler::TuningRecord> r = scheduler::import_records(f, words[i]);
      records.insert(records.end(), r.begin(), r.end());
    }
    TuningDb::open(path, scheduler::DbAccess::Write).add(records);
    std::cout << "imported " << records.size() << " records into " << path << "\n";
    return 0;
  }
  if (verb == "prune") {
    const int64_t keep = vm["keep"].as<int64_t>();
    if (keep < 1) throw std::invalid_argument("--keep takes a count >= 1");
    std::error_code ec;
    const int64_t removed =
        fs::exists(path, ec) ? TuningDb::open(path, scheduler::DbAccess::Write).prune(keep) : 0;
    std::cout << "removed " << removed << " records from " << path << "\n";
    return 0;
  }
  if (verb == "check") {
    const std::string result = TuningDb::open(path, scheduler::DbAccess::Read).integrity_check();
    std::cout << path << ": " << result << "\n";
    return result == "ok" ? 0 : 1;
  }
  throw std::invalid_argument("unknown db command '" + verb +
                              "' (known: list, export, import, prune, check, retime)");
}

}  // namespace tlmc::driver
