/* Runs a model compiled by tlmc: fills its inputs with a fixed pattern, runs it once and
 * prints the first values of each output, then times repeated runs and prints the median
 * latency. Build it against a generated library, naming the model:
 *   tlmc examples/mlp.yaml -o build/libmlp.a
 *   cc -O2 -DMODEL=mlp -Ibuild examples/run_model.c build/libmlp.a -lpthread -lm -o run_mlp
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef MODEL
#error "compile with -DMODEL=<model name>"
#endif
#define STR2(x) #x
#define STR(x) STR2(x)
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#include STR(MODEL.h)

#define INPUTS CAT(MODEL, _inputs)
#define OUTPUTS CAT(MODEL, _outputs)

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 50;
  if (runs < 1) runs = 1;
  int num_inputs = CAT(MODEL, _num_inputs), num_outputs = CAT(MODEL, _num_outputs);
  void* inputs[64];
  void* outputs[64];
  if (num_inputs > 64 || num_outputs > 64) return 1;
  for (int i = 0; i < num_inputs; ++i) {
    inputs[i] = malloc(INPUTS[i].bytes + 1);
    if (strcmp(INPUTS[i].dtype, "float32") == 0) {
      float* f = (float*)inputs[i];
      for (size_t k = 0; k < INPUTS[i].bytes / 4; ++k)
        f[k] = (float)((k * 7919u) % 200u) / 100.0f - 1.0f;
    } else {
      memset(inputs[i], 0, INPUTS[i].bytes); /* index inputs: 0 is valid everywhere */
    }
  }
  for (int i = 0; i < num_outputs; ++i) outputs[i] = malloc(OUTPUTS[i].bytes + 1);
  size_t ws_bytes = CAT(MODEL, _workspace_size)();
  void* workspace = ws_bytes ? aligned_alloc(64, (ws_bytes + 63) / 64 * 64) : NULL;

  int rc = CAT(MODEL, _run)((const void* const*)inputs, outputs, workspace);
  if (rc != 0) {
    fprintf(stderr, "%s_run failed: %d\n", STR(MODEL), rc);
    return 1;
  }
  for (int i = 0; i < num_outputs; ++i) {
    printf("%s [", OUTPUTS[i].name);
    for (int d = 0; d < OUTPUTS[i].rank; ++d)
      printf("%s%lld", d ? ", " : "", (long long)OUTPUTS[i].shape[d]);
    printf("]:");
    if (strcmp(OUTPUTS[i].dtype, "float32") == 0) {
      const float* f = (const float*)outputs[i];
      size_t n = OUTPUTS[i].bytes / 4;
      for (size_t k = 0; k < n && k < 8; ++k) printf(" %.5f", f[k]);
      if (n > 8) printf(" ...");
    }
    printf("\n");
  }
  double* times = malloc(sizeof(double) * (size_t)runs);
  for (int r = 0; r < runs; ++r) {
    double t0 = now_seconds();
    CAT(MODEL, _run)((const void* const*)inputs, outputs, workspace);
    times[r] = now_seconds() - t0;
  }
  qsort(times, (size_t)runs, sizeof(double), compare_doubles);
  printf("latency: median %.3f ms over %d runs (workspace %zu bytes)\n", times[runs / 2] * 1e3,
         runs, ws_bytes);
  return 0;
}
