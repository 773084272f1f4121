/* The thread pool of tlmc_runtime.h. Workers are started on the first parallel loop and
 * kept; a loop is posted as a job whose blocks the workers and the caller claim from one
 * atomic word holding the job's number and its next block, so that a worker late from one
 * job can never claim (or count as done) a block of the next. Waiting spins for up to
 * TLMC_RT_SPIN_NS of wall time (loops are often microseconds long, and a model's kernels
 * follow one another), then sleeps. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* syscall */
#include "tlmc_runtime.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <sys/syscall.h>
#endif

#define TLMC_RT_MAX_THREADS 256
#ifndef TLMC_RT_DEFAULT_THREADS
#define TLMC_RT_DEFAULT_THREADS 0 /* one per online core */
#endif
/* Spinning is bounded by time, not by a count of loads: a count took 0.1 ms or less, and on
 * a 2-core Intel Xeon VM a worker then slept between the kernels of a run after the caller
 * had been idle, waking by futex for each: MobileNetV2 ran 2.5 ms a call instead of 1.6 in
 * runs 100 ms apart. 2 ms keeps the workers awake through a run's serial stretches and
 * costs at most that much of a core after the last call. */
#define TLMC_RT_SPIN_NS 2000000

static int64_t TLMC_RT(now_ns)(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

typedef struct {
  pthread_mutex_t lock;    /* guards everything below that is not atomic */
  pthread_cond_t wake;     /* a new job, or stop */
  pthread_cond_t finished; /* the last block of a job is done */
  pthread_mutex_t busy;    /* held by the caller whose loop the pool runs */
  pthread_t workers[TLMC_RT_MAX_THREADS];
  int num_workers; /* started workers */
  int wanted;      /* threads asked for (caller included); <= 0: one per core */
  int stop;
  /* (job number << 32) | (blocks << 16) | next unclaimed block. A new job is published by
   * one store of this word, after its fields below are written; a block is claimed by a
   * compare-and-swap, which fails once the word has moved on to another job. The fields of
   * a job are not rewritten until every one of its blocks is done, so whoever claims a
   * block of the current job (judged by the word alone) has read that job's fields. They
   * are atomic all the same, read and written relaxed (plain moves on x86-64): a worker late
   * from one job reads them before its claim fails while the caller writes the next job's,
   * a data race in C11's model (ThreadSanitizer reported it) though the value is dropped. */
  atomic_uint_fast64_t claim;
  _Atomic(TLMC_RT(task_fn)) fn;
  _Atomic(void*) ctx;
  atomic_int_fast64_t n;
  atomic_int_fast64_t done_blocks; /* blocks of the current job finished */
} tlmc_pool;

static tlmc_pool TLMC_RT(pool) = {.lock = PTHREAD_MUTEX_INITIALIZER,
                                  .wake = PTHREAD_COND_INITIALIZER,
                                  .finished = PTHREAD_COND_INITIALIZER,
                                  .busy = PTHREAD_MUTEX_INITIALIZER,
                                  .wanted = TLMC_RT_DEFAULT_THREADS};

/* The online cores, counted once: sysconf reads a file under /sys on every call, 6 us that
 * every parallel loop paid (a model of 185 loops, 1 ms a run) before it was kept. */
static atomic_int TLMC_RT(online_cores);

static int TLMC_RT(cores)(void) {
  int n = atomic_load(&TLMC_RT(online_cores));
  if (n > 0) return n;
  long c = sysconf(_SC_NPROCESSORS_ONLN);
  n = c < 1 ? 1 : (c > TLMC_RT_MAX_THREADS ? TLMC_RT_MAX_THREADS : (int)c);
  atomic_store(&TLMC_RT(online_cores), n);
  return n;
}

static int TLMC_RT(threads_wanted)(const tlmc_pool* p) {
  int n = p->wanted <= 0 ? TLMC_RT(cores)() : p->wanted;
  return n > TLMC_RT_MAX_THREADS ? TLMC_RT_MAX_THREADS : n;
}

#define TLMC_RT_JOB(word) ((word) >> 32)
#define TLMC_RT_BLOCKS(word) ((int64_t)(((word) >> 16) & 0xffffu))
#define TLMC_RT_NEXT(word) ((int64_t)((word)&0xffffu))

/* Claims and runs blocks of job `job` until none is left or another job is current. */
static void TLMC_RT(work)(tlmc_pool* p, uint_fast64_t job) {
  for (;;) {
    uint_fast64_t word = atomic_load(&p->claim);
    if (TLMC_RT_JOB(word) != job) return;
    int64_t b = TLMC_RT_NEXT(word), blocks = TLMC_RT_BLOCKS(word);
    if (b >= blocks) return;
    /* Read before the claim; valid if it succeeds (the job is then current, unfinished). */
    int64_t n = atomic_load_explicit(&p->n, memory_order_relaxed);
    TLMC_RT(task_fn) fn = atomic_load_explicit(&p->fn, memory_order_relaxed);
    void* ctx = atomic_load_explicit(&p->ctx, memory_order_relaxed);
    if (!atomic_compare_exchange_weak(&p->claim, &word, word + 1)) continue;
    int64_t per = (n + blocks - 1) / blocks;
    int64_t begin = b * per, end = begin + per < n ? begin + per : n;
    if (begin < end) fn(ctx, begin, end);
    if (atomic_fetch_add(&p->done_blocks, 1) + 1 == blocks) {
      pthread_mutex_lock(&p->lock);
      pthread_cond_broadcast(&p->finished);
      pthread_mutex_unlock(&p->lock);
    }
  }
}

static void* TLMC_RT(worker)(void* arg) {
  tlmc_pool* p = (tlmc_pool*)arg;
  uint_fast64_t seen = TLMC_RT_JOB(atomic_load(&p->claim));
  for (;;) {
    const int64_t since = TLMC_RT(now_ns)();
    for (int spins = 1; TLMC_RT_JOB(atomic_load(&p->claim)) == seen; ++spins) {
      if (spins % 64 != 0) continue;
      sched_yield();
      if (TLMC_RT(now_ns)() - since > TLMC_RT_SPIN_NS) break;
    }
    pthread_mutex_lock(&p->lock);
    while (TLMC_RT_JOB(atomic_load(&p->claim)) == seen && !p->stop)
      pthread_cond_wait(&p->wake, &p->lock);
    if (p->stop) {
      pthread_mutex_unlock(&p->lock);
      return NULL;
    }
    seen = TLMC_RT_JOB(atomic_load(&p->claim));
    pthread_mutex_unlock(&p->lock);
    TLMC_RT(work)(p, seen);
  }
}

/* Joins every worker; called with p->busy held. */
static void TLMC_RT(stop_workers)(tlmc_pool* p) {
  pthread_mutex_lock(&p->lock);
  p->stop = 1;
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->lock);
  for (int i = 0; i < p->num_workers; ++i) pthread_join(p->workers[i], NULL);
  p->num_workers = 0;
  p->stop = 0;
}

/* Starts workers up to the wanted count; called with p->busy held. */
static void TLMC_RT(start_workers)(tlmc_pool* p) {
  int want = TLMC_RT(threads_wanted)(p) - 1;
  if (p->num_workers > want) TLMC_RT(stop_workers)(p);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 8u << 20); /* kernels keep tiles on the stack */
  while (p->num_workers < want) {
    if (pthread_create(&p->workers[p->num_workers], &attr, TLMC_RT(worker), p) != 0) break;
    ++p->num_workers;
  }
  pthread_attr_destroy(&attr);
}

void TLMC_RT(parallel_for)(int64_t n, TLMC_RT(task_fn) fn, void* ctx) {
  tlmc_pool* p = &TLMC_RT(pool);
  if (n <= 0) return;
  if (n == 1 || pthread_mutex_trylock(&p->busy) != 0) {
    fn(ctx, 0, n);
    return;
  }
  if (p->num_workers != TLMC_RT(threads_wanted)(p) - 1) TLMC_RT(start_workers)(p);
  int64_t threads = p->num_workers + 1;
  if (threads == 1) {
    fn(ctx, 0, n);
    pthread_mutex_unlock(&p->busy);
    return;
  }
  pthread_mutex_lock(&p->lock);
  atomic_store_explicit(&p->fn, fn, memory_order_relaxed);
  atomic_store_explicit(&p->ctx, ctx, memory_order_relaxed);
  atomic_store_explicit(&p->n, n, memory_order_relaxed);
  int64_t blocks = n < threads ? n : threads; /* <= TLMC_RT_MAX_THREADS: fits 16 bits */
  atomic_store(&p->done_blocks, 0);
  uint_fast64_t job = (TLMC_RT_JOB(atomic_load(&p->claim)) + 1) & 0xffffffffu;
  /* publishes the job, every field above written */
  atomic_store(&p->claim, job << 32 | (uint_fast64_t)blocks << 16);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->lock);
  TLMC_RT(work)(p, job);
  const int64_t since = TLMC_RT(now_ns)();
  for (int spins = 1; atomic_load(&p->done_blocks) < blocks; ++spins)
    if (spins % 256 == 0 && TLMC_RT(now_ns)() - since > TLMC_RT_SPIN_NS) break;
  pthread_mutex_lock(&p->lock);
  while (atomic_load(&p->done_blocks) < blocks) pthread_cond_wait(&p->finished, &p->lock);
  pthread_mutex_unlock(&p->lock);
  pthread_mutex_unlock(&p->busy);
}

void TLMC_RT(set_num_threads)(int n) {
  tlmc_pool* p = &TLMC_RT(pool);
  pthread_mutex_lock(&p->busy);
  p->wanted = n;
  pthread_mutex_unlock(&p->busy);
}

int TLMC_RT(num_threads)(void) {
  tlmc_pool* p = &TLMC_RT(pool);
  return TLMC_RT(threads_wanted)(p);
}

void TLMC_RT(shutdown)(void) {
  tlmc_pool* p = &TLMC_RT(pool);
  pthread_mutex_lock(&p->busy);
  TLMC_RT(stop_workers)(p);
  pthread_mutex_unlock(&p->busy);
}

/* CPUID leaf 7: EBX bit 16 AVX512F, EDX bit 22 AMX-BF16, bit 24 AMX-TILE; subleaf 1: EAX bit 5
 * AVX512_BF16. XCR0 bits 5-7: the OS saves AVX-512 state. Linux (5.16 on) hands AMX's tile
 * data only to a process that asked: ARCH_REQ_XCOMP_PERM (0x1023), XFEATURE_XTILEDATA (18). */
static int TLMC_RT(has_bf16_unit)(int unit) {
#if defined(__x86_64__) && defined(__linux__)
  unsigned eax, ebx, ecx, edx, xcr0_low, xcr0_high;
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) || !(ebx & (1u << 16))) return 0;
  const unsigned amx = edx;
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) || !(eax & (1u << 5))) return 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 27))) return 0; /* OSXSAVE */
  __asm__ volatile("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
  (void)xcr0_high;
  if ((xcr0_low & 0xe0u) != 0xe0u) return 0;
  if (unit < 2) return 1;
  if (!(amx & (1u << 22)) || !(amx & (1u << 24))) return 0;
  return syscall(SYS_arch_prctl, 0x1023L, 18L) == 0;
#else
  (void)unit;
  return 0;
#endif
}

static atomic_int TLMC_RT(bf16_state)[3]; /* by unit: 0 not asked yet, 1 usable, 2 not */

int TLMC_RT(bf16_ready)(int unit) {
  if (unit < 1 || unit > 2) return -1;
  int state = atomic_load(&TLMC_RT(bf16_state)[unit]);
  if (state == 0) {
    /* Racing first calls ask twice, harmlessly: the answer is the same. */
    state = TLMC_RT(has_bf16_unit)(unit) ? 1 : 2;
    atomic_store(&TLMC_RT(bf16_state)[unit], state);
  }
  return state == 1 ? 0 : -1;
}
