// Measurement through the real pieces: C compiled in process by Clang, loaded and run in a
// forked worker, checked against the reference interpreter, timed. A candidate that crashes,
// hangs or computes a wrong answer is a failed measurement with its reason, and the next
// candidate is measured in a new worker.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "scheduler/partition.h"
#include "scheduler/sketch.h"
#include "tune/measurer.h"

namespace tlmc::tune {
namespace {

using scheduler::MeasureStatus;

MeasureTask matmul_task() {
  const ir::Graph g = frontend::read_yaml_text(R"(
tlmc: 1
name: mm
inputs:
  a: {shape: [24, 40]}
weights:
  b: {shape: [40, 48], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: MatMul, inputs: [a, b], outputs: [c]}
  - {op: Relu, inputs: [c], outputs: [y]}
outputs: [y]
)",
                                               "mm.yaml");
  const scheduler::Partition p = scheduler::partition_graph(g);
  return make_measure_task(g, p.subgraphs.at(0), ir::lower_subgraph(g, p.subgraphs.at(0)), 7);
}

// A measurement unit written by hand around `body` (params: a, b, then y).
std::string unit(const std::string& body) {
  return "#include <string.h>\nvoid tlmc_measure_run(void* const* p, char* s) { (void)s; " + body +
         " }\nvoid tlmc_measure_threads(int n) { (void)n; }\nvoid tlmc_measure_shutdown(void) {}\n";
}

MeasureOptions quick() {
  MeasureOptions o;
  o.min_seconds = 0.001;
  o.repeats = 3;
  o.timeout_seconds = 2;
  return o;
}

TEST(Measurement, TheTaskHoldsReferenceOutputs) {
  const MeasureTask task = matmul_task();
  ASSERT_EQ(task.inputs.size(), 2u);
  ASSERT_EQ(task.expected.size(), 1u);
  EXPECT_EQ(task.expected[0].type.numel(), 24 * 48);
  EXPECT_EQ(task.flops, 2.0 * 24 * 40 * 48 + 24 * 48);
}

TEST(Measurement, AnEnormousCandidateIsNotCompiled) {
  const MeasureTask task = matmul_task();
  Measurer m(task, ir::host_target(), quick());
  const std::string huge = unit("") + "/*" + std::string(size_t{2} << 20, 'x') + "*/\n";
  const MeasureResult r = m.measure_source(huge, 0);
  EXPECT_EQ(r.status, MeasureStatus::CompileError);
  EXPECT_NE(r.reason.find("more than 262144: not compiled"), std::string::npos) << r.reason;
  EXPECT_LT(r.compile_seconds, 1.0);
}

// C statements computing matmul_task's output correctly (params p: a, b, then y).
const char* const kMatmulBody = R"(
    const float* a = (const float*)p[0]; const float* b = (const float*)p[1];
    float* y = (float*)p[2];
    for (int i = 0; i < 24; ++i)
      for (int j = 0; j < 48; ++j) {
        float acc = 0;
        for (int k = 0; k < 40; ++k) acc += a[i * 40 + k] * b[k * 48 + j];
        y[i * 48 + j] = acc > 0 ? acc : 0;
      }
)";

// A correct measurement unit of matmul_task that counts its runs in the file `count`.
std::string counting_unit(const std::string& count) {
  return "#include <stdio.h>\n" + unit(kMatmulBody + std::string(R"(
    static int runs = 0;
    FILE* f = fopen(")" + count + R"(", "w");
    fprintf(f, "%d", ++runs);
    fclose(f);)"));
}

int runs_counted(const std::string& count) {
  FILE* f = std::fopen(count.c_str(), "r");
  int runs = 0;
  if (!f || std::fscanf(f, "%d", &runs) != 1) runs = -1;
  if (f) std::fclose(f);
  return runs;
}

TEST(Measurement, ACandidateSlowerThanTheCutRunsOnceAfterItsCheck) {
  const MeasureTask task = matmul_task();
  Measurer m(task, ir::host_target(), quick());
  const std::string count = ::testing::TempDir() + "tlmc_slow_cut_runs";
  m.set_slow_cut(1e-12);  // slower than that: every candidate
  MeasureResult r = m.measure_source(counting_unit(count), 0);
  ASSERT_EQ(r.status, MeasureStatus::Ok) << r.reason;
  EXPECT_GT(r.seconds, 0);
  EXPECT_EQ(runs_counted(count), 3);  // the check, a warm-up, one timed run

  m.set_slow_cut(0);  // no cut: the check, the first run, then the repeats
  r = m.measure_source(counting_unit(count), 0);
  ASSERT_EQ(r.status, MeasureStatus::Ok) << r.reason;
  EXPECT_GE(runs_counted(count), 2 + quick().repeats);
  std::remove(count.c_str());
}

// A correct unit that starts a second thread at its first run (as a thread pool does) and
// writes, at every run, each thread's allowed CPUs to the file `cpus`, one line per thread.
std::string unit_listing_cpus(const std::string& cpus) {
  return R"(#define _GNU_SOURCE
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static pthread_t helper;
static int started;
static volatile int stop;
static void* idle(void* arg) { while (!stop) usleep(1000); return arg; }
static void list_cpus(void) {
  FILE* f = fopen(")" +
         cpus + R"(", "w");
  DIR* d = opendir("/proc/self/task");
  for (struct dirent* e = readdir(d); e; e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    cpu_set_t set;
    sched_getaffinity(atoi(e->d_name), sizeof set, &set);
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) fprintf(f, "%d ", c);
    fprintf(f, "\n");
  }
  closedir(d);
  fclose(f);
}
void tlmc_measure_run(void* const* p, char* s) {
  (void)s;)" +
         kMatmulBody + R"(
  if (!started) started = pthread_create(&helper, 0, idle, 0) == 0;
  list_cpus();
}
void tlmc_measure_threads(int n) { (void)n; }
void tlmc_measure_shutdown(void) {
  if (!started) return;
  stop = 1;
  pthread_join(helper, 0);
  started = stop = 0;
}
)";
}

// Left to the scheduler, the two threads of a 2-core measurement at times shared one CPU
// for a whole candidate, doubling its time: the worker pins each thread to a CPU of its own.
TEST(Measurement, EachThreadIsTimedOnACpuOfItsOwn) {
  const MeasureTask task = matmul_task();
  Measurer m(task, ir::host_target(), quick());
  const std::string cpus = ::testing::TempDir() + "tlmc_measure_cpus";
  const MeasureResult r = m.measure_source(unit_listing_cpus(cpus), 0);
  ASSERT_EQ(r.status, MeasureStatus::Ok) << r.reason;
  std::FILE* f = std::fopen(cpus.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::vector<std::string> lines;
  char line[4096];
  while (std::fgets(line, sizeof line, f)) lines.emplace_back(line);
  std::fclose(f);
  std::remove(cpus.c_str());
  ASSERT_EQ(lines.size(), 2u) << "the worker's thread and the unit's";
  for (const std::string& l : lines) {
    EXPECT_EQ(std::count(l.begin(), l.end(), ' '), 1) << "one CPU each: " << l;
  }
  if (std::thread::hardware_concurrency() >= 2) {
    EXPECT_NE(lines[0], lines[1]);
  }
}

TEST(Measurement, CrashesHangsAndWrongAnswersAreRecordedAndTheSearchGoesOn) {
  const MeasureTask task = matmul_task();
  const ir::Target target = ir::host_target();
  Measurer m(task, target, quick());

  MeasureResult ok = m.measure(scheduler::default_schedule(task.program, target));
  EXPECT_EQ(ok.status, MeasureStatus::Ok) << ok.reason;
  EXPECT_GT(ok.seconds, 0);
  EXPECT_GT(ok.compile_seconds, 0);

  MeasureResult crash = m.measure_source(unit("*(volatile int*)0 = 1;"), 0);
  EXPECT_EQ(crash.status, MeasureStatus::Crashed);
  EXPECT_EQ(crash.reason, "the candidate's run killed by signal 11 (Segmentation fault)");

  MeasureResult hang = m.measure_source(unit("volatile int x = 1; while (x) {}"), 0);
  EXPECT_EQ(hang.status, MeasureStatus::TimedOut);
  EXPECT_EQ(hang.reason, "still running after 2 s");

  MeasureResult wrong = m.measure_source(unit("memset(p[2], 0, 24 * 48 * 4);"), 0);
  EXPECT_EQ(wrong.status, MeasureStatus::WrongResult);
  EXPECT_EQ(wrong.reason.rfind("output 0 element ", 0), 0u) << wrong.reason;

  MeasureResult unwritten = m.measure_source(unit(""), 0);
  EXPECT_EQ(unwritten.status, MeasureStatus::WrongResult) << "outputs left unwritten must fail";

  MeasureResult bad = m.measure_source("this is not C", 0);
  EXPECT_EQ(bad.status, MeasureStatus::CompileError);
  EXPECT_NE(bad.reason.find("error"), std::string::npos) << bad.reason;

  // The worker was started again after the crash and after the hang, and measures on.
  MeasureResult after = m.measure(scheduler::random_schedule(task.program, target, 5));
  EXPECT_EQ(after.status, MeasureStatus::Ok) << after.reason;
  EXPECT_EQ(m.workers_started(), 3);
}

// Runaway candidates meet the limits of their run: each is failed with the limit named, in
// far less than its time limit (30 s), and the worker is started again for the next.
TEST(Measurement, ARunawayCandidateMeetsItsCpuMemoryAndFileLimits) {
  const MeasureTask task = matmul_task();
  MeasureOptions o = quick();
  o.timeout_seconds = 30;
  o.run_cpu_seconds = 1;
  o.run_memory_bytes = int64_t{128} << 20;
  o.file_bytes = int64_t{1} << 20;
  Measurer m(task, ir::host_target(), o);

  const MeasureResult spin = m.measure_source(unit("volatile int x = 1; while (x) {}"), 0);
  EXPECT_EQ(spin.status, MeasureStatus::Crashed);
  EXPECT_EQ(spin.reason,
            "the candidate's run killed by signal 24 (CPU time limit exceeded): more than 1 s of "
            "CPU time");

  // Touches 16 MiB at a time, for ever: the watch sees it pass 128 MiB.
  const MeasureResult greedy = m.measure_source("#include <stdlib.h>\n" + unit(R"(
    static char* volatile kept;
    for (;;) { char* q = malloc(16 << 20); if (!q) break; memset(q, 1, 16 << 20); kept = q; })"),
                                                0);
  EXPECT_EQ(greedy.status, MeasureStatus::Crashed);
  EXPECT_EQ(greedy.reason,
            "killed while running: it used more than 128 MiB of memory beyond tlmc's own");

  const std::string path = ::testing::TempDir() + "tlmc_runaway_file";
  const MeasureResult writer = m.measure_source("#include <stdio.h>\n" + unit(R"(
    static char block[1 << 16];
    FILE* f = fopen(")" + path + R"(", "w");
    for (int i = 0; i < 64; ++i) fwrite(block, 1, sizeof block, f);
    fclose(f);)"),
                                                0);
  EXPECT_EQ(writer.status, MeasureStatus::Crashed);
  EXPECT_EQ(writer.reason,
            "the candidate's run killed by signal 25 (File size limit exceeded): it wrote a file "
            "of more than 1 MiB");
  std::remove(path.c_str());

  EXPECT_EQ(m.measure_source(unit(kMatmulBody), 0).status, MeasureStatus::Ok);
  EXPECT_EQ(m.workers_started(), 4);
}

// C whose macros expand to 2^24 statements: Clang would take minutes and gigabytes.
std::string exploding_unit() {
  std::string s = "#define E0 x = x * 3 + 1;\n";
  for (int i = 1; i <= 24; ++i)
    s += "#define E" + std::to_string(i) + " E" + std::to_string(i - 1) + " E" +
         std::to_string(i - 1) + "\n";
  return s + unit("volatile int x = 0; E24");
}

// The candidate's compilation runs in a child of its own: past its time or its memory limit
// it is stopped and the candidate failed, and tlmc goes on.
TEST(Measurement, ACompilationMeetsItsTimeAndMemoryLimits) {
  const MeasureTask task = matmul_task();
  MeasureOptions o = quick();
  o.compile_timeout_seconds = 1;
  o.compile_memory_bytes = int64_t{64} << 30;
  {
    Measurer m(task, ir::host_target(), o);
    const MeasureResult r = m.measure_source(exploding_unit(), 0);
    EXPECT_EQ(r.status, MeasureStatus::CompileError);
    EXPECT_EQ(r.reason, "Clang still compiling after 1 s");
    EXPECT_LT(r.compile_seconds, 5);
  }
  o.compile_timeout_seconds = 120;
  o.compile_memory_bytes = int64_t{64} << 20;
  Measurer m(task, ir::host_target(), o);
  const MeasureResult r = m.measure_source(exploding_unit(), 0);
  EXPECT_EQ(r.status, MeasureStatus::CompileError);
  EXPECT_EQ(r.reason,
            "Clang killed while compiling: it used more than 64 MiB of memory beyond tlmc's own");
  EXPECT_LT(r.compile_seconds, 30);
  // The next candidate compiles in a new child.
  EXPECT_EQ(m.measure_source(unit(kMatmulBody), 0).status, MeasureStatus::Ok);
}

// With cold weights (the constant input b flushed from the caches before every timed run,
// each run timed alone) a candidate is still checked, then timed.
TEST(Measurement, ColdWeightsAreCheckedAndTimed) {
  const MeasureTask task = matmul_task();
  ASSERT_TRUE(task.program.tensor(task.program.inputs[1]).constant) << "b is a weight";
  MeasureOptions o = quick();
  o.cold_weights = true;
  const ir::Target target = ir::host_target();
  Measurer m(task, target, o);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    const MeasureResult r = m.measure(scheduler::random_schedule(task.program, target, seed));
    EXPECT_EQ(r.status, MeasureStatus::Ok) << r.reason;
    EXPECT_GT(r.seconds, 0);
  }
  EXPECT_EQ(m.measure_source(unit("memset(p[2], 0, 24 * 48 * 4);"), 0).status,
            MeasureStatus::WrongResult);
}

// Every cold run of a kernel that reads 4 rows of a 64 MB table (larger than most CPUs'
// caches) evicts the pages it reads, not the table: before, each run evicted all of it
// (0.22 s a run for BERT's 94 MB word embeddings with clflush on one Intel Xeon), and the
// number of runs followed the kernel's microseconds, so every candidate ran out of time.
TEST(Measurement, AColdRunEvictsWhatTheKernelReads) {
  const ir::Graph g = frontend::read_yaml_text(R"(
tlmc: 1
name: rows
inputs:
  ids: {shape: [4], dtype: int64}
weights:
  table: {shape: [16384, 1024], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: Gather, inputs: [table, ids], outputs: [y], attrs: {axis: 0}}
outputs: [y]
)",
                                               "rows.yaml");
  const scheduler::Partition p = scheduler::partition_graph(g);
  const MeasureTask task =
      make_measure_task(g, p.subgraphs.at(0), ir::lower_subgraph(g, p.subgraphs.at(0)), 7);
  MeasureOptions o = quick();
  o.cold_weights = true;
  o.timeout_seconds = 10;
  const ir::Target target = ir::host_target();
  Measurer m(task, target, o);
  const int64_t row = 1024 * 4, page = 4096;
  for (uint64_t seed = 0; seed < 3; ++seed) {
    const MeasureResult r = m.measure(scheduler::random_schedule(task.program, target, seed));
    ASSERT_EQ(r.status, MeasureStatus::Ok) << r.reason;
    // Each of the 4 rows lies on at most 2 pages; the table's partial end pages come too.
    EXPECT_GE(r.evicted_bytes, 4 * row) << "seed " << seed;
    EXPECT_LE(r.evicted_bytes, 4 * (row + 2 * page) + 2 * page) << "seed " << seed;
    EXPECT_GT(r.evict_seconds, 0);
  }
  EXPECT_EQ(m.workers_started(), 1);
}

// A product reads all of its weight: all of it is evicted.
TEST(Measurement, AColdRunEvictsAWeightReadWhole) {
  const MeasureTask task = matmul_task();
  MeasureOptions o = quick();
  o.cold_weights = true;
  const ir::Target target = ir::host_target();
  Measurer m(task, target, o);
  const MeasureResult r = m.measure(scheduler::random_schedule(task.program, target, 1));
  ASSERT_EQ(r.status, MeasureStatus::Ok) << r.reason;
  EXPECT_EQ(r.evicted_bytes, 40 * 48 * 4);
}

TEST(Measurement, RandomSchedulesMeasureCorrect) {
  const MeasureTask task = matmul_task();
  const ir::Target target = ir::host_target();
  Measurer m(task, target, quick());
  for (uint64_t seed = 0; seed < 12; ++seed) {
    MeasureResult r = m.measure(scheduler::random_schedule(task.program, target, seed));
    EXPECT_EQ(r.status, MeasureStatus::Ok) << "seed " << seed << ": " << r.reason;
  }
  EXPECT_EQ(m.workers_started(), 1) << "one worker serves many candidates";
}

}  // namespace
}  // namespace tlmc::tune
