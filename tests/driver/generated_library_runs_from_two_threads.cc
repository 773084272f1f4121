// NAME_run allocates nothing and keeps no state: two threads run it at once with two
// workspaces and get the same results as one thread alone, and ThreadSanitizer finds no
// race in the library or its runtime's thread pool doing so.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace tlmc::test {
namespace {

const char* kHarness = R"(#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "transformer_layer.h"

enum { IN = TRANSFORMER_LAYER_INPUT0_BYTES, OUT = TRANSFORMER_LAYER_OUTPUT0_BYTES };
static float inputs[2][IN / 4], expected[2][OUT / 4];
static int failures[2];

static void fill(float* x, int seed) {
  for (int i = 0; i < IN / 4; ++i) x[i] = (float)((i * 37 + seed * 101) % 97) / 48.0f - 1.0f;
}

static void* worker(void* arg) {
  int id = (int)(long)arg;
  void* ws = aligned_alloc(64, transformer_layer_workspace_size() + 64);
  float* out = malloc(OUT);
  for (int r = 0; r < 200; ++r) {
    const void* in[1] = {inputs[id]};
    void* outs[1] = {out};
    memset(out, 0, OUT);
    if (transformer_layer_run(in, outs, ws) != 0 || memcmp(out, expected[id], OUT) != 0) ++failures[id];
  }
  free(out);
  free(ws);
  return NULL;
}

int main(void) {
  void* ws = aligned_alloc(64, transformer_layer_workspace_size() + 64);
  for (int id = 0; id < 2; ++id) {
    fill(inputs[id], id);
    const void* in[1] = {inputs[id]};
    void* outs[1] = {expected[id]};
    if (transformer_layer_run(in, outs, ws) != 0) return 2;
  }
  if (memcmp(expected[0], expected[1], OUT) == 0) return 3; /* the inputs must differ */
  pthread_t t[2];
  for (long id = 0; id < 2; ++id) pthread_create(&t[id], NULL, worker, (void*)id);
  for (int id = 0; id < 2; ++id) pthread_join(t[id], NULL);
  printf("failures %d %d\n", failures[0], failures[1]);
  return failures[0] + failures[1] ? 1 : 0;
}
)";

TEST(Reentrancy, TwoThreadsWithTwoWorkspacesAgreeWithOne) {
  TempDir dir;
  const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/transformer_layer.yaml";
  CommandResult c =
      run_command(std::string(TLMC_EXE) + " -O0 " + model + " -o " + dir.file("libt.a"));
  ASSERT_EQ(c.exit_code, 0) << c.out;
  write_file(dir.file("main.c"), kHarness);
  CommandResult b = run_command("cc -std=c11 -O2 -Wall -Wextra -Werror -I" + dir.path() + " " +
                                dir.file("main.c") + " " + dir.file("libt.a") +
                                " -lpthread -lm -o " + dir.file("main"));
  ASSERT_EQ(b.exit_code, 0) << b.out;
  CommandResult r = run_command(dir.file("main"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "failures 0 0\n");
}

// The same under ThreadSanitizer: the library's C and its runtime's thread pool built with
// -fsanitize=thread by the system C compiler, two callers on two workspaces, each run
// using the pool's threads (--threads 2): no report.
TEST(Reentrancy, TheThreadPoolIsCleanUnderThreadSanitizer) {
  TempDir dir;
  const std::string model = std::string(TLMC_SOURCE_DIR) + "/examples/transformer_layer.yaml";
  CommandResult c =
      run_command(std::string(TLMC_EXE) + " -O0 --threads 2 " + model + " -o " + dir.file("src"));
  ASSERT_EQ(c.exit_code, 0) << c.out;
  write_file(dir.file("src/main.c"), kHarness);
  CommandResult b =
      run_command("cd " + dir.file("src") +
                  " && cc -std=c11 -O1 -g -fsanitize=thread main.c transformer_layer.c "
                  "transformer_layer_runtime.c transformer_layer_weights.S -lpthread -lm -o main");
  ASSERT_EQ(b.exit_code, 0) << b.out;
  CommandResult r = run_command("TSAN_OPTIONS=halt_on_error=1:exitcode=66 " + dir.file("src/main"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, "failures 0 0\n");
}

}  // namespace
}  // namespace tlmc::test
