// `tlmc db retime MODEL DB...`: each kernel with a record is timed again with the -O0 schedule
// and each database's best (the -O0 record left out on asking), side by side, and a kernel
// a database lacks is a dash in its column; --only narrows the kernels; bad usage and a
// missing database are refused with what to do.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "ir/target.h"
#include "scheduler/tuning_db.h"
#include "support/test_support.h"

namespace tlmc::test {
namespace {

std::string tlmc(const std::string& args) { return std::string(TLMC_EXE) + " " + args + " 2>&1"; }

std::vector<std::vector<std::string>> rows(const std::string& out) {
  std::vector<std::vector<std::string>> table;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    std::istringstream split(line);
    for (std::string c; std::getline(split, c, '\t');) cells.push_back(c);
    table.push_back(cells);
  }
  return table;
}

TEST(DbRetime, EachDatabasesBestIsTimedBesideTheO0Schedule) {
  if (!ir::host_target().runs_here) GTEST_SKIP() << "retime times on this machine";
  TempDir dir;
  write_file(dir.file("small.yaml"), product_softmax_yaml(12, 40, 24));
  const std::string model = dir.file("small.yaml");
  ASSERT_EQ(run_command(tlmc(model + " -O2 --trials 4 --emit=source -o " + dir.file("a") +
                             " --tuning-db " + dir.file("a.db")))
                .exit_code,
            0);
  // The second database tunes one of the two kernels alone.
  const std::vector<scheduler::TuningSummary> tuned =
      scheduler::TuningDb::open(dir.file("a.db"), scheduler::DbAccess::Read).summary();
  ASSERT_EQ(tuned.size(), 2u);
  const std::string alone = tuned[0].workload_key, other = tuned[1].workload_key;
  ASSERT_EQ(run_command(tlmc(model + " -O2 --trials 2 --tune-only " + alone + " --emit=source -o " +
                             dir.file("b") + " --tuning-db " + dir.file("b.db")))
                .exit_code,
            0);
  const CommandResult r = run_command(tlmc("db retime " + model + " " + dir.file("a.db") + " " +
                                           dir.file("b.db") + " --rounds 2 --without-o0"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("# re-timed on " + ir::host_target().descriptor() + ": 2 rounds"),
            std::string::npos)
      << r.out;
  const auto table = rows(r.out);
  ASSERT_EQ(table.size(), 4u) << r.out;  // the header, two kernels, the total
  EXPECT_EQ(table[0],
            (std::vector<std::string>{"kernel", "-O0", dir.file("a.db"), dir.file("b.db")}));
  for (size_t i = 1; i < 3; ++i) {
    ASSERT_EQ(table[i].size(), 4u) << r.out;
    const bool tuned_alone = table[i][0] == alone;
    EXPECT_TRUE(tuned_alone || table[i][0] == other) << r.out;
    EXPECT_GT(std::stod(table[i][1]), 0) << r.out;
    EXPECT_GT(std::stod(table[i][2]), 0) << r.out;
    // b.db tuned one kernel only: the other has its -O0 record there at most, left out.
    if (tuned_alone) EXPECT_GT(std::stod(table[i][3]), 0) << r.out;
    if (!tuned_alone) EXPECT_EQ(table[i][3], "-") << r.out;
  }
  EXPECT_EQ(table[3][0], "total");
  EXPECT_EQ(table[3][3], "-") << "a column without every kernel has no total";
  EXPECT_NEAR(std::stod(table[3][1]), std::stod(table[1][1]) + std::stod(table[2][1]), 0.02);

  const CommandResult only = run_command(
      tlmc("db retime " + model + " " + dir.file("a.db") + " --rounds 1 --only " + other));
  ASSERT_EQ(only.exit_code, 0) << only.out;
  const auto one = rows(only.out);
  ASSERT_EQ(one.size(), 3u) << only.out;
  EXPECT_EQ(one[1][0], other);

  const CommandResult missing = run_command(tlmc("db retime " + model + " " + dir.file("none.db")));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.out.find(dir.file("none.db") +
                             ": error: no such tuning database: name the files tlmc tuned into"),
            std::string::npos)
      << missing.out;
  const CommandResult usage = run_command(tlmc("db retime " + model));
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_NE(usage.out.find("tlmc db retime needs a model and databases"), std::string::npos)
      << usage.out;
  const CommandResult rounds =
      run_command(tlmc("db retime " + model + " " + dir.file("a.db") + " --rounds 0"));
  EXPECT_EQ(rounds.exit_code, 2);
}

}  // namespace
}  // namespace tlmc::test
