// A build opens its tuning database once and hands that connection to every pass that
// reads or writes it (tuning, the shared cache's size, the records, the layout plans'
// and the in-model timings, the schedules): at -O3, where every one of them runs, and at
// the levels that only read it, on a CPU and a CUDA target.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "driver/compile.h"
#include "scheduler/tuning_db.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

const std::string kModel = product_softmax_yaml(8, 24, 40);

// Opens of a tuning database during one in-process build.
int64_t opens_of(const driver::CompileOptions& o) {
  const int64_t before = scheduler::TuningDb::opened();
  driver::compile_model(o);
  return scheduler::TuningDb::opened() - before;
}

TEST(TuningDatabase, ABuildOpensItOnce) {
  TempDir dir;
  write_file(dir.file("small.yaml"), kModel);
  driver::CompileOptions o;
  o.model_path = dir.file("small.yaml");
  o.target = ir::host_target();
  o.tuning_db = dir.file("t.db");
  std::ostringstream progress;
  o.progress_stream = &progress;
  o.opt_level = 3;
  o.trials = 4;
  EXPECT_EQ(opens_of(o), 1) << progress.str();
  ASSERT_NE(progress.str().find("timed in the model"), std::string::npos) << progress.str();
  EXPECT_FALSE(scheduler::TuningDb::open(o.tuning_db, scheduler::DbAccess::Read).all().empty());
  // Reading the records it wrote, and at the levels that measure nothing.
  for (int level : {3, 1, 0}) {
    o.opt_level = level;
    EXPECT_EQ(opens_of(o), 1) << "-O" << level;
  }
  o.target = *ir::parse_target("cuda-sm80");
  o.opt_level = 2;
  EXPECT_EQ(opens_of(o), 1) << "cuda-sm80 -O2";
}

}  // namespace
}  // namespace tlmc::test
