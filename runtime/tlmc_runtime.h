/* The tlmc runtime: a thread pool for the parallel loops of generated kernels. Plain C11
 * and POSIX threads, no dependency on the compiler. The compiler copies this file into every
 * generated library with TLMC_RT_PREFIX defined to "<model>_rt_", so that several models
 * linked into one program each have their own copy without clashing symbols. */
#ifndef TLMC_RUNTIME_H
#define TLMC_RUNTIME_H

#include <stdint.h>

#ifndef TLMC_RT_PREFIX
#define TLMC_RT_PREFIX tlmc_rt_
#endif
#define TLMC_RT_CAT2(a, b) a##b
#define TLMC_RT_CAT(a, b) TLMC_RT_CAT2(a, b)
#define TLMC_RT(name) TLMC_RT_CAT(TLMC_RT_PREFIX, name)

/* One parallel loop body: runs iterations [begin, end) with the loop's captured context. */
typedef void (*TLMC_RT(task_fn))(void* ctx, int64_t begin, int64_t end);

/* Runs fn over [0, n) split into contiguous blocks, one per thread; returns when every
 * block is done. The calling thread takes part. When the pool is busy with another caller's
 * loop (two threads running a model at once), the loop runs on the calling thread alone. */
void TLMC_RT(parallel_for)(int64_t n, TLMC_RT(task_fn) fn, void* ctx);

/* Threads used by parallel loops, the caller included; n <= 0 means one per online core.
 * Takes effect at the next parallel loop. */
void TLMC_RT(set_num_threads)(int n);
int TLMC_RT(num_threads)(void);

/* The bf16 products of a unit: 1 AVX512_BF16 (vdpbf16ps), 2 AMX (tile data and AMX-BF16,
 * with AVX512_BF16). 0 when this CPU has them and the OS lets the process use them (for AMX,
 * Linux's permission is asked for once, by the first call); -1 otherwise. Kernels with
 * those instructions run only after it returned 0. */
int TLMC_RT(bf16_ready)(int unit);

/* Stops and joins the pool's threads (the next parallel loop starts them again): call it
 * before unloading the code, or before fork(). Waits for a loop in progress to finish. */
void TLMC_RT(shutdown)(void);

#endif
