/* Regression test of the runtime's thread pool: many tiny parallel loops back to back, with
 * more threads than cores so that workers are often preempted between two jobs. Every loop
 * must run each of its iterations exactly once and return only when all have run; a worker
 * late from one job must never claim or complete a block of the next. A lost completion
 * hangs (ctest's timeout fails the test); a block run twice, or run for the wrong job, is
 * caught by the per-iteration counts. Plain C, linked with the runtime alone. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tlmc_runtime.h"

enum { kMaxN = 64 };

typedef struct {
  int job;
  atomic_int hits[kMaxN];
  atomic_int wrong_job;
} loop_ctx;

static int current_job;

static void body(void* p, int64_t begin, int64_t end) {
  loop_ctx* c = (loop_ctx*)p;
  if (c->job != current_job) atomic_fetch_add(&c->wrong_job, 1);
  for (int64_t i = begin; i < end; ++i) atomic_fetch_add(&c->hits[i], 1);
}

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char** argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 3.0;
  int threads[] = {2, 3, 8, 16};
  long loops = 0;
  double start = now_seconds();
  for (int t = 0; now_seconds() - start < seconds; t = (t + 1) % 4) {
    tlmc_rt_set_num_threads(threads[t]);
    for (int rep = 0; rep < 2000; ++rep, ++loops) {
      loop_ctx c = {.job = (int)loops};
      current_job = (int)loops;
      int64_t n = 2 + (loops % (kMaxN - 1));
      tlmc_rt_parallel_for(n, body, &c);
      if (atomic_load(&c.wrong_job) != 0) {
        fprintf(stderr, "loop %ld ran a block for another job\n", loops);
        return 1;
      }
      for (int64_t i = 0; i < kMaxN; ++i) {
        int want = i < n ? 1 : 0, got = atomic_load(&c.hits[i]);
        if (got != want) {
          fprintf(stderr, "loop %ld (n %lld, %d threads): iteration %lld ran %d times\n", loops,
                  (long long)n, threads[t], (long long)i, got);
          return 1;
        }
      }
    }
  }
  printf("%ld parallel loops, every iteration run once\n", loops);
  return 0;
}
