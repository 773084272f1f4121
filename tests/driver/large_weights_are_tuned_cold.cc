// A model whose weights exceed the private caches of the cores it runs on and half their
// shared cache reads them from memory in every run, so -O3 measures its kernels with the
// weights flushed from the caches, and records them under a descriptor ending
// " weights=cold": warm and cold times are never compared. A model whose weights fit is
// measured warm. The shared cache's size is measured once and kept in the database.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "ir/target.h"
#include "scheduler/tuning_db.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

// y = x * w, w of [k, n] floats.
std::string matmul_model(int64_t k, int64_t n) {
  return "tlmc: 1\nname: mm\ninputs:\n  x: {shape: [2, " + std::to_string(k) +
         "]}\nweights:\n  w: {shape: [" + std::to_string(k) + ", " + std::to_string(n) +
         "], init: {uniform: [-1, 1]}, seed: 5}\nnodes:\n  - {op: MatMul, inputs: [x, w], "
         "outputs: [y]}\noutputs: [y]\n";
}

const char* kFactKey = "shared_cache ";

// The database tuned_descriptor tunes `model` into.
std::string database_of(const TempDir& dir, const std::string& model,
                        std::optional<int64_t> shared_cache) {
  return dir.file(std::to_string(model.size()) + "_" + std::to_string(shared_cache.value_or(-1)) +
                  ".db");
}

// The descriptor of the records -O3 makes of `model`; `shared_cache`: the shared cache's
// size recorded in the database beforehand (none: measured by that run).
std::string tuned_descriptor(const TempDir& dir, const std::string& model,
                             std::optional<int64_t> shared_cache) {
  write_file(dir.file("m.yaml"), model);
  const std::string db = database_of(dir, model, shared_cache);
  if (shared_cache)
    scheduler::TuningDb::open(db, scheduler::DbAccess::Write)
        .set_fact(kFactKey + ir::host_target().descriptor(), std::to_string(*shared_cache));
  CommandResult r = run_command(std::string(TLMC_EXE) + " " + dir.file("m.yaml") +
                                " -O3 --trials 4 --tuning-db " + db + " -o " + dir.file("out"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const std::vector<scheduler::TuningRecord> records =
      scheduler::TuningDb::open(db, scheduler::DbAccess::Read).all();
  EXPECT_FALSE(records.empty());
  return records.empty() ? "" : records[0].target;
}

// Weights of twice the cores' L2: k = 1024 rows of n floats.
int64_t columns_beyond_the_cores_caches(const ir::Target& host) {
  return 2 * static_cast<int64_t>(host.l2_bytes) * host.cores / (int64_t{1024} * 4) + 16;
}

TEST(ColdWeights, WeightsBeyondTheCoresCachesAreMeasuredCold) {
  const ir::Target host = ir::host_target();
  if (!host.runs_here) GTEST_SKIP() << "-O3 measures on this machine";
  TempDir dir;
  const std::string warm = host.descriptor();
  EXPECT_EQ(tuned_descriptor(dir, matmul_model(64, 64), 0), warm);
  const int64_t n = columns_beyond_the_cores_caches(host);
  const int64_t bytes = int64_t{1024} * n * 4;
  EXPECT_EQ(tuned_descriptor(dir, matmul_model(1024, n), 0), warm + " weights=cold")
      << "no shared cache known: the private caches decide";
  EXPECT_EQ(tuned_descriptor(dir, matmul_model(1024, n), 2 * bytes - 64), warm + " weights=cold")
      << "more than half the shared cache";
  EXPECT_EQ(tuned_descriptor(dir, matmul_model(1024, n), 2 * bytes), warm)
      << "half the shared cache holds them";
}

TEST(ColdWeights, TheSharedCacheIsMeasuredOnceAndRecorded) {
  const ir::Target host = ir::host_target();
  if (!host.runs_here) GTEST_SKIP() << "-O3 measures on this machine";
  TempDir dir;
  const std::string model = matmul_model(1024, columns_beyond_the_cores_caches(host));
  tuned_descriptor(dir, model, std::nullopt);
  const std::string db = database_of(dir, model, std::nullopt);
  const std::optional<std::string> fact =
      scheduler::TuningDb::open(db, scheduler::DbAccess::Read).fact(kFactKey + host.descriptor());
  ASSERT_TRUE(fact.has_value());
  const int64_t bytes = std::stoll(*fact);
  // 0, or a power of two from 4 MB to 128 MB.
  EXPECT_TRUE(bytes == 0 || (bytes >= (int64_t{4} << 20) && bytes <= (int64_t{128} << 20) &&
                             (bytes & (bytes - 1)) == 0))
      << bytes;
}

// Records exported and imported into another database build what their database builds.
// The export carries records, not the shared cache's measured size: the copy is given the
// original's (measured again, under load, it can come out another size and turn the weights
// warm, whose records are other ones). -O0: nothing is measured, the records decide.
TEST(ColdWeights, ImportedRecordsBuildWhatTheirDatabaseBuilds) {
  const ir::Target host = ir::host_target();
  if (!host.runs_here) GTEST_SKIP() << "-O3 measures on this machine";
  TempDir dir;
  const std::string model = matmul_model(1024, columns_beyond_the_cores_caches(host));
  tuned_descriptor(dir, model, std::nullopt);
  const std::string tuned = database_of(dir, model, std::nullopt);
  const std::string tlmc = std::string(TLMC_EXE) + " ";
  CommandResult r = run_command(tlmc + "db export --tuning-db " + tuned + " -o " +
                                dir.file("r.jsonl") + " && " + tlmc + "db import " +
                                dir.file("r.jsonl") + " --tuning-db " + dir.file("copy.db"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string fact = kFactKey + host.descriptor();
  const std::optional<std::string> cache =
      scheduler::TuningDb::open(tuned, scheduler::DbAccess::Read).fact(fact);
  ASSERT_TRUE(cache.has_value());
  scheduler::TuningDb::open(dir.file("copy.db"), scheduler::DbAccess::Write).set_fact(fact, *cache);
  for (const char* db : {"a", "b"}) {
    const std::string from = std::string(db) == "a" ? tuned : dir.file("copy.db");
    std::string command = tlmc;
    command += dir.file("m.yaml") + " -O0 -v --tuning-db " + from;
    command += " --emit=source -o " + dir.file(db);
    r = run_command(command);
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("tlmc: 1 of 1 kernels scheduled from tuning records"), std::string::npos)
        << db << ":\n"
        << r.out;
  }
  EXPECT_EQ(read_file(dir.file("a/mm.c")), read_file(dir.file("b/mm.c")));
}

}  // namespace
}  // namespace tlmc::test
