// A model whose weights exceed the private caches of the cores it runs on reads them from
// memory in every run, so -O3 measures its kernels with the weights flushed from the
// caches, and records them under a descriptor ending " weights=cold": warm and cold times
// are never compared. A model whose weights fit is measured warm.
#include <gtest/gtest.h>

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

std::string tuned_descriptor(const TempDir& dir, const std::string& model) {
  write_file(dir.file("m.yaml"), model);
  const std::string db = dir.file(std::to_string(model.size()) + ".db");
  CommandResult r = run_command(std::string(TLMC_EXE) + " " + dir.file("m.yaml") +
                                " -O3 --trials 4 --tuning-db " + db + " -o " + dir.file("out"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const std::vector<scheduler::TuningRecord> records = scheduler::TuningDb::open(db, false).all();
  EXPECT_FALSE(records.empty());
  return records.empty() ? "" : records[0].target;
}

TEST(ColdWeights, WeightsBeyondTheCoresCachesAreMeasuredCold) {
  const ir::Target host = ir::host_target();
  if (!host.runs_here) GTEST_SKIP() << "-O3 measures on this machine";
  TempDir dir;
  const std::string warm = host.descriptor();
  EXPECT_EQ(tuned_descriptor(dir, matmul_model(64, 64)), warm);
  // Twice the cores' L2 in weights: k = 1024 rows of n floats.
  const int64_t n = 2 * static_cast<int64_t>(host.l2_bytes) * host.cores / (1024 * 4) + 16;
  EXPECT_EQ(tuned_descriptor(dir, matmul_model(1024, n)), warm + " weights=cold");
}

}  // namespace
}  // namespace tlmc::test
