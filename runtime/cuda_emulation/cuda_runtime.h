// CUDA on the CPU: a stand-in for the CUDA runtime header, so that the .cu text tlmc emits
// compiles with a host C++17 compiler (-I this folder) and runs here, checked. Each CUDA
// thread is a fiber; the blocks of a launch run one after another, the threads of a block
// in turn, each until it waits at a barrier or a warp shuffle or returns. Device memory is
// host memory. Shared memory is reached through the TLMC_SHARED and TLMC_DYNAMIC_SHARED
// arrays of tlmc_cuda.h, whose every access is checked against a shadow copy: two threads of
// a block touching one word between two barriers, one of them writing, is a race. A barrier
// that some threads of the block skip (they returned, or wait at another barrier), a shuffle
// some lanes of a warp skip, or a wait that can never end stops the launch: it returns
// cudaErrorLaunchFailure, sticky as on a GPU, and tlmc_emulation_message() says which kernel,
// block and threads, and why.
//
// What it does not emulate: several streams running at once (every call runs to completion,
// in order), warp-synchronous code that relies on lanes running in lockstep without a
// shuffle, texture and constant memory, clusters, and the timing of anything.
#ifndef TLMC_CUDA_EMULATION_RUNTIME_H
#define TLMC_CUDA_EMULATION_RUNTIME_H

#define TLMC_CUDA_EMULATION 1

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif

// --- Qualifiers: the host has one memory and runs everything. ---
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __maxnreg__(n)
#define __align__(n) alignas(n)
#define __restrict__ __restrict
// __shared__ is deliberately left undefined: shared memory must be declared through
// TLMC_SHARED / TLMC_DYNAMIC_SHARED (tlmc_cuda.h), whose accesses the emulator checks.

// --- Vector types and the launch geometry. ---
struct dim3 {
  unsigned x, y, z;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
};
struct uint3 {
  unsigned x, y, z;
};
struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }

// --- Errors: the runtime's codes that emulated code can meet. ---
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInsufficientDriver = 35,
  cudaErrorInvalidDeviceFunction = 98,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorNoKernelImageForDevice = 209,
  cudaErrorECCUncorrectable = 214,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
  cudaErrorLaunchTimeout = 702,
  cudaErrorAssert = 710,
  cudaErrorHardwareStackError = 714,
  cudaErrorIllegalInstruction = 715,
  cudaErrorMisalignedAddress = 716,
  cudaErrorInvalidAddressSpace = 717,
  cudaErrorInvalidPc = 718,
  cudaErrorLaunchFailure = 719,
  cudaErrorUnknown = 999,
};
typedef cudaError_t cudaError;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
};
typedef struct tlmc_emulated_stream* cudaStream_t;
typedef struct tlmc_emulated_event* cudaEvent_t;
typedef struct tlmc_emulated_graph* cudaGraph_t;

namespace tlmc_emu {

constexpr int kWarp = 32;
constexpr size_t kStackBytes = 256 * 1024;  // a fiber's stack: register tiles live there
constexpr size_t kGuardBytes = 4096;

// One CUDA thread of the block being run.
struct Fiber {
  enum State { Ready, AtBarrier, AtWarp, Done };
  void* sp = nullptr;  // its stack pointer while switched out
#if !defined(__x86_64__)
  ucontext_t context;
#endif
  char* stack = nullptr;
  State state = Ready;
  uint3 index{0, 0, 0};
  unsigned linear = 0;  // threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
  int barrier_line = 0;
  unsigned warp_round = 0;  // shuffles this thread has finished
};

// The shadow of one 4-byte word of shared memory, for the barrier interval `epoch`.
struct ShadowWord {
  uint64_t epoch = 0;
  int32_t writer = -1;  // linear thread index; -1 none
  int32_t reader = -1;  // linear thread index; -1 none, -2 more than one
  bool atomic = true;   // touched by atomics only (or not yet touched)
  // The block (Launch::block_serial) that last wrote it: a read in another block reads what
  // no thread of its own wrote, which a GPU leaves undefined (the emulator's memory would
  // hold the last block's or zeros).
  uint64_t written_block = 0;
};

struct Warp {
  uint64_t values[2][kWarp];  // shuffle operands, by round parity, by lane
  unsigned masks[2][kWarp];   // each lane's mask at that shuffle
  int round_width = kWarp;
};

// The launch in progress (one at a time).
struct Launch {
  const char* kernel = "";
  dim3 grid, block;
  uint3 block_index{0, 0, 0};
  std::function<void()> body;
  std::vector<Fiber> fibers;
  std::vector<Warp> warps;
  void* scheduler_sp = nullptr;
#if !defined(__x86_64__)
  ucontext_t scheduler_context;
#endif
  size_t current = 0;
  uint64_t epoch = 1;         // barrier intervals, counted over the whole process
  uint64_t block_serial = 0;  // the block running, counted over the whole process
  std::vector<unsigned char> dynamic_shared;
  std::vector<ShadowWord> dynamic_shadow;
  std::string error;
};

struct State {
  Launch* launch = nullptr;
  std::vector<char*> stacks;  // reused from launch to launch
  cudaError_t sticky = cudaSuccess;
  cudaError_t last = cudaSuccess;
  std::string message;
  bool reverse = false;
  bool reverse_read = false;
  uint64_t next_epoch = 1;
  uint64_t next_block = 0;
  long long sample_stride = 1;  // run every n-th block (and the last)
  // cudaFuncSetAttribute's cudaFuncAttributeMaxDynamicSharedMemorySize, by kernel.
  std::vector<std::pair<const void*, int>> dynamic_shared_optin;
  struct Allocation {
    void* pointer;  // what cudaMalloc gave
    void* mapping;  // its pages, guards included
    size_t bytes;
  };
  std::vector<Allocation> allocations;
};

// The accessors every checked access and every threadIdx goes through: inlined even at the
// -O1 the emulated library is compiled with (a call each costs more than the access).
#define TLMC_EMU_HOT inline __attribute__((always_inline))
#define TLMC_EMU_COLD __attribute__((noinline, cold))
inline State the_state;
TLMC_EMU_HOT State& state() { return the_state; }
TLMC_EMU_HOT Launch& launch() { return *the_state.launch; }
TLMC_EMU_HOT Fiber& self() {
  Launch& l = launch();
  return l.fibers[l.current];
}

// --- Fibers: a context switch that saves the callee-saved registers. ---
#if defined(__x86_64__)
extern "C" void tlmc_emu_switch(void** save_sp, void* load_sp);
extern "C" void tlmc_emu_trampoline();
// Pushes the System V callee-saved registers and the floating-point control words, saves
// the stack pointer, loads the other one and pops the same. A new fiber's stack is laid out
// so that its first switch returns into the trampoline, which calls r12(rbx).
asm(R"(
  .pushsection .text
  .weak tlmc_emu_switch
  .type tlmc_emu_switch,@function
tlmc_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $16, %rsp
  stmxcsr 8(%rsp)
  fnstcw (%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  fldcw (%rsp)
  ldmxcsr 8(%rsp)
  addq $16, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size tlmc_emu_switch, .-tlmc_emu_switch
  .weak tlmc_emu_trampoline
  .type tlmc_emu_trampoline,@function
tlmc_emu_trampoline:
  movq %rbx, %rdi
  callq *%r12
  ud2
  .size tlmc_emu_trampoline, .-tlmc_emu_trampoline
  .popsection
)");
#endif

void fiber_main(void* fiber);
#if !defined(__x86_64__)
void fiber_main_entry();
#endif

inline void start_fiber(Fiber& f) {
#if defined(__x86_64__)
  uint64_t* top = reinterpret_cast<uint64_t*>(f.stack + kStackBytes);  // 16-byte aligned
  uint64_t* sp = top - 9;  // control words (2 slots), r15 r14 r13 r12 rbx rbp, return
  uint32_t mxcsr = 0;
  uint16_t fcw = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fcw));
  sp[0] = fcw;
  sp[1] = mxcsr;
  sp[2] = sp[3] = sp[4] = 0;                                 // r15 r14 r13
  sp[5] = reinterpret_cast<uint64_t>(&fiber_main);           // r12: what the trampoline calls
  sp[6] = reinterpret_cast<uint64_t>(&f);                    // rbx: its argument
  sp[7] = 0;                                                 // rbp
  sp[8] = reinterpret_cast<uint64_t>(&tlmc_emu_trampoline);  // where the first switch returns
  f.sp = sp;
#else
  getcontext(&f.context);
  f.context.uc_stack.ss_sp = f.stack;
  f.context.uc_stack.ss_size = kStackBytes;
  f.context.uc_link = nullptr;
  makecontext(&f.context, reinterpret_cast<void (*)()>(&fiber_main_entry), 0);
#endif
}

// From a fiber back to the scheduler.
inline void yield_to_scheduler() {
  Launch& l = launch();
  Fiber& f = l.fibers[l.current];
#if defined(__x86_64__)
  tlmc_emu_switch(&f.sp, l.scheduler_sp);
#else
  swapcontext(&f.context, &l.scheduler_context);
#endif
}

// From the scheduler into fiber `i`.
inline void resume(size_t i) {
  Launch& l = launch();
  l.current = i;
#if defined(__x86_64__)
  tlmc_emu_switch(&l.scheduler_sp, l.fibers[i].sp);
#else
  swapcontext(&l.scheduler_context, &l.fibers[i].context);
#endif
}

#if !defined(__x86_64__)
inline void fiber_main_entry() { fiber_main(&self()); }
#endif

inline std::string thread_text(const Fiber& f) {
  return "(" + std::to_string(f.index.x) + "," + std::to_string(f.index.y) + "," +
         std::to_string(f.index.z) + ")";
}

// Stops the launch: the message names the kernel and the block; the fiber never resumes.
[[noreturn]] inline void fail(const std::string& what) {
  Launch& l = launch();
  if (l.error.empty())
    l.error = "kernel " + std::string(l.kernel) + ", block (" + std::to_string(l.block_index.x) +
              "," + std::to_string(l.block_index.y) + "," + std::to_string(l.block_index.z) +
              "): " + what;
  for (;;) {
    Fiber& f = self();
    f.state = Fiber::Done;
    yield_to_scheduler();
  }
}

inline void fiber_main(void* fiber) {
  Fiber& f = *static_cast<Fiber*>(fiber);
  launch().body();
  f.state = Fiber::Done;
  yield_to_scheduler();
  std::abort();  // a finished fiber is never resumed
}

// --- Shared memory, checked. ---
// What touch() found wrong, reported out of line (the checks themselves are inlined).
[[noreturn]] TLMC_EMU_COLD inline void unwritten_read(bool atomic, const char* array,
                                                      long long index) {
  fail("shared array " + std::string(array) + "[" + std::to_string(index) + "] " +
       (atomic ? "updated atomically" : "read") + " by thread " + thread_text(self()) +
       " before any thread of its block wrote it");
}
[[noreturn]] TLMC_EMU_COLD inline void shared_race(const ShadowWord& w, bool write,
                                                   const char* array, long long index) {
  Launch& l = launch();
  const Fiber& f = self();
  const int32_t me = static_cast<int32_t>(f.linear);
  const std::string where = std::string(array) + "[" + std::to_string(index) + "]";
  const std::string mine = "thread " + thread_text(f) + (write ? " wrote" : " read");
  auto other = [&](int32_t t) { return "thread " + thread_text(l.fibers[size_t(t)]); };
  if (w.writer >= 0 && w.writer != me)
    fail("shared-memory race on " + where + ": " + other(w.writer) + " wrote it and " + mine +
         " it with no __syncthreads() between");
  if (w.reader == -2)
    fail("shared-memory race on " + where + ": threads read it and " + mine +
         " it with no __syncthreads() between");
  fail("shared-memory race on " + where + ": " + other(w.reader) + " read it and " + mine +
       " it with no __syncthreads() between");
}

TLMC_EMU_HOT void touch(ShadowWord& w, bool write, bool atomic, const char* array,
                        long long index) {
  Launch& l = launch();
  const int32_t me = static_cast<int32_t>(self().linear);
  if (w.epoch != l.epoch) w = ShadowWord{l.epoch, -1, -1, true, w.written_block};
  if ((!write || atomic) && w.written_block != l.block_serial) unwritten_read(atomic, array, index);
  w.written_block = l.block_serial;
  if (atomic && w.atomic) {  // atomics alone on a word do not race
    w.writer = me;
    return;
  }
  if ((w.writer >= 0 && w.writer != me) ||
      (write && (w.reader == -2 || (w.reader >= 0 && w.reader != me))))
    shared_race(w, write, array, index);
  w.atomic = false;
  if (write) {
    w.writer = me;
  } else if (w.reader == -1) {
    w.reader = me;
  } else if (w.reader != me) {
    w.reader = -2;
  }
}

// One element of a shared array: reading and writing it are checked.
template <typename T>
class SharedRef {
 public:
  TLMC_EMU_HOT SharedRef(T* p, ShadowWord* shadow, const char* array, long long index)
      : p_(p), shadow_(shadow), array_(array), index_(index) {}
  TLMC_EMU_HOT operator T() const {
    check(false);
    return *p_;
  }
  TLMC_EMU_HOT SharedRef& operator=(T v) {
    check(true);
    *p_ = v;
    return *this;
  }
  SharedRef& operator=(const SharedRef& o) { return *this = static_cast<T>(o); }
  SharedRef& operator+=(T v) { return *this = static_cast<T>(*this) + v; }
  SharedRef& operator-=(T v) { return *this = static_cast<T>(*this) - v; }
  SharedRef& operator*=(T v) { return *this = static_cast<T>(*this) * v; }
  T atomic_add(T v) {
    check_atomic();
    const T old = *p_;
    *p_ = old + v;
    return old;
  }

 private:
  TLMC_EMU_HOT void check(bool write) const {
    const size_t words = (sizeof(T) + 3) / 4;
    for (size_t i = 0; i < words; ++i) touch(shadow_[i], write, false, array_, index_);
  }
  void check_atomic() const { touch(shadow_[0], true, true, array_, index_); }
  T* p_;
  ShadowWord* shadow_;
  const char* array_;
  long long index_;
};

// A shared array of `count` elements of T (static: declared in the kernel with a size; or a
// view of the launch's dynamic shared memory). Out-of-bounds indices stop the launch.
template <typename T>
class SharedArray {
  static_assert(sizeof(T) % 4 == 0, "shared arrays hold 4-byte words or larger");

 public:
  SharedArray(const char* name, long long count) : name_(name), count_(count), dynamic_(false) {
    data_.resize(static_cast<size_t>(count));
    shadow_.resize(static_cast<size_t>(count) * sizeof(T) / 4);
  }
  // A view of the dynamic shared memory of the launch in progress: all of it, or `count`
  // elements from byte `offset` (one of several arrays the kernel places there).
  explicit SharedArray(const char* name) : name_(name), count_(0), dynamic_(true) {}
  SharedArray(const char* name, long long offset, long long count)
      : name_(name), count_(count), dynamic_(true), offset_(offset), placed_(true) {}
  // Whether element i lies at a multiple of `bytes` from where a GPU places the array (its
  // first byte aligned to 16: __align__(16) arrays, dynamic ones placed at multiples of 16).
  bool aligned(long long i, long long bytes) const {
    return (offset_ + i * static_cast<long long>(sizeof(T))) % bytes == 0;
  }
  TLMC_EMU_HOT SharedRef<T> operator[](long long i) {
    T* base = data();
    ShadowWord* shadow = shadow_words();
    const long long n = size();
    if (i < 0 || i >= n) out_of_bounds(i, n);
    return SharedRef<T>(base + i, shadow + i * static_cast<long long>(sizeof(T) / 4), name_, i);
  }

 private:
  [[noreturn]] TLMC_EMU_COLD void out_of_bounds(long long i, long long n) const {
    fail("shared array " + std::string(name_) + " read or written at " + std::to_string(i) +
         ", outside its " + std::to_string(n) + " elements");
  }
  [[noreturn]] TLMC_EMU_COLD void past_dynamic(size_t bytes) const {
    fail("shared array " + std::string(name_) + " lies past the " + std::to_string(bytes) +
         " bytes of dynamic shared memory the launch gave");
  }
  TLMC_EMU_HOT T* data() {
    if (!dynamic_) return data_.data();
    std::vector<unsigned char>& bytes = launch().dynamic_shared;
    if (placed_ &&
        offset_ + count_ * static_cast<long long>(sizeof(T)) > static_cast<long long>(bytes.size()))
      past_dynamic(bytes.size());
    return reinterpret_cast<T*>(bytes.data() + offset_);
  }
  TLMC_EMU_HOT ShadowWord* shadow_words() {
    return dynamic_ ? launch().dynamic_shadow.data() + offset_ / 4 : shadow_.data();
  }
  TLMC_EMU_HOT long long size() const {
    if (!dynamic_ || placed_) return count_;
    return static_cast<long long>(launch().dynamic_shared.size() / sizeof(T));
  }
  const char* name_;
  long long count_;
  bool dynamic_;
  long long offset_ = 0;  // placed dynamic arrays: their first byte
  bool placed_ = false;
  std::vector<T> data_;
  std::vector<ShadowWord> shadow_;
};

// TLMC_COPY4: four consecutive elements of global memory into a shared array, as one
// 16-byte load and store on a GPU, which faults unless both addresses are multiples of 16:
// checked here, then copied element by element through the checked shared accesses.
template <typename T>
void copy4(SharedArray<T>& to, long long at, const T* from, long long from_at) {
  static_assert(sizeof(T) == 4, "16-byte copies move four 4-byte elements");
  if (reinterpret_cast<uintptr_t>(from + from_at) % 16 != 0 || !to.aligned(at, 16))
    fail("a 16-byte copy from global element " + std::to_string(from_at) + " to shared element " +
         std::to_string(at) + " is not aligned to 16 bytes");
  for (long long i = 0; i < 4; ++i) to[at + i] = from[from_at + i];
}

// --- Barriers and warp shuffles. ---
inline void syncthreads(int line) {
  Fiber& f = self();
  f.state = Fiber::AtBarrier;
  f.barrier_line = line;
  yield_to_scheduler();
}

template <typename T>
T shuffle(unsigned mask, T value, int width, int (*source)(int lane, int arg, int width), int arg) {
  static_assert(sizeof(T) <= 8, "shuffles move 8 bytes at most");
  Launch& l = launch();
  Fiber& f = self();
  const int lane = static_cast<int>(f.linear % kWarp);
  Warp& w = l.warps[f.linear / kWarp];
  const unsigned parity = f.warp_round & 1u;
  const int lanes =
      static_cast<int>(std::min<unsigned>(kWarp, l.fibers.size() - (f.linear / kWarp) * kWarp));
  // Every lane of the warp reaches each shuffle here, so its mask must name them all and
  // no other: a lane past the block's threads does not exist, and a GPU leaves a shuffle
  // naming one (or leaving out one that takes part) undefined.
  const unsigned all = lanes == kWarp ? ~0u : (1u << lanes) - 1u;
  if (mask != all)
    fail("thread " + thread_text(f) + " shuffles with mask " + std::to_string(mask) +
         " where the lanes of its warp are " + std::to_string(all));
  if (width < 1 || width > kWarp || (width & (width - 1)) != 0)
    fail("a shuffle of width " + std::to_string(width) + " (a power of 2 up to 32)");
  std::memcpy(&w.values[parity][lane], &value, sizeof(T));
  w.masks[parity][lane] = mask;
  f.state = Fiber::AtWarp;
  yield_to_scheduler();  // until every lane of the warp has deposited its value
  ++f.warp_round;
  const int from = source(lane, arg, width);
  if (from < 0 || from >= lanes)
    fail("thread " + thread_text(f) + " shuffles from lane " + std::to_string(from) +
         ", past the " + std::to_string(lanes) + " lanes of its warp");
  T out;
  std::memcpy(&out, &w.values[parity][from], sizeof(T));
  return out;
}

inline int lane_xor(int lane, int arg, int width) {
  const int base = lane - lane % width;
  const int other = lane ^ arg;
  return other >= base + width ? lane : other;
}
inline int lane_down(int lane, int arg, int width) {
  return lane % width + arg < width ? lane + arg : lane;
}
inline int lane_up(int lane, int arg, int width) { return lane % width >= arg ? lane - arg : lane; }
inline int lane_from(int lane, int arg, int width) {
  return lane - lane % width + ((arg % width) + width) % width;
}

// --- Launches. ---
inline bool order_reversed() {
  State& s = state();
  if (!s.reverse_read) {
    const char* env = std::getenv("TLMC_EMULATION_ORDER");
    if (env && std::string(env) == "reverse") s.reverse = true;
    s.reverse_read = true;
  }
  return s.reverse;
}

// Runs the fibers of the current block until each has returned; "" or what stopped it.
inline void run_block(Launch& l) {
  const size_t n = l.fibers.size();
  const bool reverse = order_reversed();
  for (size_t i = 0; i < n; ++i) {
    Fiber& f = l.fibers[i];
    f.state = Fiber::Ready;
    f.warp_round = 0;
    start_fiber(f);
  }
  l.epoch = ++state().next_epoch;
  for (;;) {
    for (size_t k = 0; k < n; ++k) {
      const size_t i = reverse ? n - 1 - k : k;
      if (l.fibers[i].state == Fiber::Ready) resume(i);
      if (!l.error.empty()) return;
    }
    size_t done = 0, at_barrier = 0;
    const Fiber* waiting = nullptr;
    const Fiber* exited = nullptr;
    for (const Fiber& f : l.fibers) {
      if (f.state == Fiber::Done) {
        ++done;
        exited = &f;
      }
      if (f.state == Fiber::AtBarrier) {
        ++at_barrier;
        if (waiting && waiting->barrier_line != f.barrier_line) {
          l.error = "kernel " + std::string(l.kernel) + ", block (" +
                    std::to_string(l.block_index.x) + "," + std::to_string(l.block_index.y) + "," +
                    std::to_string(l.block_index.z) + "): thread " + thread_text(*waiting) +
                    " waits at the __syncthreads() of line " +
                    std::to_string(waiting->barrier_line) + " and thread " + thread_text(f) +
                    " at the one of line " + std::to_string(f.barrier_line);
          return;
        }
        waiting = &f;
      }
    }
    if (done == n) return;
    bool released = false;
    // A warp whose lanes have all reached their shuffle goes on; lanes that returned
    // without it leave the others waiting forever.
    for (size_t w = 0; w * kWarp < n; ++w) {
      const size_t first = w * kWarp, last = std::min(n, first + kWarp);
      size_t at = 0, gone = 0;
      for (size_t i = first; i < last; ++i) {
        at += l.fibers[i].state == Fiber::AtWarp;
        gone += l.fibers[i].state == Fiber::Done;
      }
      if (at == 0) continue;
      if (at + gone == last - first && gone > 0) {
        l.error = "kernel " + std::string(l.kernel) + ", block (" +
                  std::to_string(l.block_index.x) + "," + std::to_string(l.block_index.y) + "," +
                  std::to_string(l.block_index.z) + "): warp " + std::to_string(w) +
                  " shuffles while some of its lanes have returned";
        return;
      }
      if (at == last - first) {
        for (size_t i = first; i < last; ++i) l.fibers[i].state = Fiber::Ready;
        released = true;
      }
    }
    if (released) continue;
    if (at_barrier > 0 && at_barrier + done == n) {
      if (done > 0) {
        l.error = "kernel " + std::string(l.kernel) + ", block (" +
                  std::to_string(l.block_index.x) + "," + std::to_string(l.block_index.y) + "," +
                  std::to_string(l.block_index.z) + "): thread " + thread_text(*exited) +
                  " returned without the __syncthreads() of line " +
                  std::to_string(waiting->barrier_line) + " that " + std::to_string(at_barrier) +
                  " threads of its block wait at";
        return;
      }
      for (Fiber& f : l.fibers) f.state = Fiber::Ready;
      l.epoch = ++state().next_epoch;
      continue;
    }
    l.error = "kernel " + std::string(l.kernel) + ", block (" + std::to_string(l.block_index.x) +
              "," + std::to_string(l.block_index.y) + "," + std::to_string(l.block_index.z) +
              "): threads wait forever (some at __syncthreads(), some at a warp shuffle)";
    return;
  }
}

inline cudaError_t set_error(cudaError_t e, const std::string& message) {
  State& s = state();
  s.last = e;
  if (!message.empty()) s.message = message;
  return e;
}

// Runs `body` as kernel `name` on a grid of blocks; the arguments were captured by value.
// A launch's dynamic shared memory without the opt-in attribute: 48 KiB.
constexpr size_t kDefaultDynamicShared = 48 * 1024;

inline cudaError_t run_launch(const char* name, const void* kernel, dim3 grid, dim3 block,
                              size_t dynamic_bytes, std::function<void()> body) {
  State& s = state();
  if (s.sticky != cudaSuccess) return set_error(s.sticky, "");
  const unsigned long long threads = 1ULL * block.x * block.y * block.z;
  const unsigned long long blocks = 1ULL * grid.x * grid.y * grid.z;
  if (threads == 0 || threads > 1024 || blocks == 0 || block.z > 64 || grid.x > 2147483647u ||
      grid.y > 65535 || grid.z > 65535)
    return set_error(cudaErrorInvalidConfiguration,
                     "kernel " + std::string(name) + ": a grid of " + std::to_string(grid.x) + "x" +
                         std::to_string(grid.y) + "x" + std::to_string(grid.z) + " blocks of " +
                         std::to_string(threads) + " threads cannot launch");
  // Past 48 KiB of dynamic shared memory, a kernel must have opted in to as much.
  if (dynamic_bytes > kDefaultDynamicShared) {
    int allowed = 0;
    for (const auto& [k, bytes] : s.dynamic_shared_optin)
      if (k == kernel) allowed = bytes;
    if (dynamic_bytes > static_cast<size_t>(allowed))
      return set_error(cudaErrorInvalidValue,
                       "kernel " + std::string(name) + ": " + std::to_string(dynamic_bytes) +
                           " bytes of dynamic shared memory, over 48 KiB, and its "
                           "cudaFuncAttributeMaxDynamicSharedMemorySize is " +
                           std::to_string(allowed));
  }
  Launch l;
  l.kernel = name;
  l.grid = grid;
  l.block = block;
  l.body = std::move(body);
  l.fibers.resize(threads);
  l.warps.resize((threads + kWarp - 1) / kWarp);
  l.dynamic_shared.resize(dynamic_bytes);
  l.dynamic_shadow.resize((dynamic_bytes + 3) / 4);
  while (s.stacks.size() < threads) {
    // A stack with an inaccessible page below it: an overflow faults instead of corrupting.
    void* m = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
      return set_error(cudaErrorMemoryAllocation, "no memory for the emulator's stacks");
    mprotect(m, kGuardBytes, PROT_NONE);
    s.stacks.push_back(static_cast<char*>(m) + kGuardBytes);
  }
  for (unsigned z = 0, i = 0; z < block.z; ++z)
    for (unsigned y = 0; y < block.y; ++y)
      for (unsigned x = 0; x < block.x; ++x, ++i) {
        l.fibers[i].stack = s.stacks[i];
        l.fibers[i].index = {x, y, z};
        l.fibers[i].linear = i;
      }
  Launch* outer = s.launch;
  s.launch = &l;
  const bool reverse = order_reversed();
  const long long stride = std::max(1LL, s.sample_stride);
  for (unsigned long long k = 0; k < blocks; ++k) {
    const unsigned long long b = reverse ? blocks - 1 - k : k;
    if (b % static_cast<unsigned long long>(stride) != 0 && b != blocks - 1) continue;
    l.block_index = {static_cast<unsigned>(b % grid.x), static_cast<unsigned>(b / grid.x % grid.y),
                     static_cast<unsigned>(b / (1ULL * grid.x * grid.y))};
    l.block_serial = ++s.next_block;
    run_block(l);
    if (!l.error.empty()) break;
  }
  s.launch = outer;
  if (!l.error.empty()) {
    s.sticky = cudaErrorLaunchFailure;
    return set_error(cudaErrorLaunchFailure, l.error);
  }
  return cudaSuccess;
}

}  // namespace tlmc_emu

// --- The built-in variables. ---
#define threadIdx (::tlmc_emu::self().index)
#define blockIdx (::tlmc_emu::launch().block_index)
#define blockDim (::tlmc_emu::launch().block)
#define gridDim (::tlmc_emu::launch().grid)
#define warpSize 32
#define __syncthreads() ::tlmc_emu::syncthreads(__LINE__)

template <typename T>
inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  return tlmc_emu::shuffle(mask, v, width, tlmc_emu::lane_xor, lane_mask);
}
template <typename T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return tlmc_emu::shuffle(mask, v, width, tlmc_emu::lane_down, static_cast<int>(delta));
}
template <typename T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return tlmc_emu::shuffle(mask, v, width, tlmc_emu::lane_up, static_cast<int>(delta));
}
template <typename T>
inline T __shfl_sync(unsigned mask, T v, int lane, int width = 32) {
  return tlmc_emu::shuffle(mask, v, width, tlmc_emu::lane_from, lane);
}

// --- Device functions the host's libm lacks. ---
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, 4);
  return f;
}
inline int __float_as_int(float f) {
  int i;
  std::memcpy(&i, &f, 4);
  return i;
}
template <typename T>
inline T __ldg(const T* p) {
  return *p;
}

// --- Atomics: the fibers of one process never run at once, so a read-modify-write is one. ---
template <typename T>
inline T atomicAdd(T* p, T v) {
  const T old = *p;
  *p = old + v;
  return old;
}
template <typename T>
inline T atomicAdd(tlmc_emu::SharedRef<T> r, T v) {
  return r.atomic_add(v);
}
template <typename T>
inline T atomicMax(T* p, T v) {
  const T old = *p;
  *p = std::max(old, v);
  return old;
}
template <typename T>
inline T atomicMin(T* p, T v) {
  const T old = *p;
  *p = std::min(old, v);
  return old;
}
template <typename T>
inline T atomicExch(T* p, T v) {
  const T old = *p;
  *p = v;
  return old;
}
template <typename T>
inline T atomicCAS(T* p, T compare, T v) {
  const T old = *p;
  if (old == compare) *p = v;
  return old;
}

// --- The runtime API, on host memory. ---
inline cudaError_t cudaGetLastError() {
  tlmc_emu::State& s = tlmc_emu::state();
  const cudaError_t e = s.last;
  s.last = s.sticky;
  return e;
}
inline cudaError_t cudaPeekAtLastError() { return tlmc_emu::state().last; }
inline const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
#define TLMC_EMU_NAME(x) \
  case x:                \
    return #x;
    TLMC_EMU_NAME(cudaSuccess)
    TLMC_EMU_NAME(cudaErrorInvalidValue)
    TLMC_EMU_NAME(cudaErrorMemoryAllocation)
    TLMC_EMU_NAME(cudaErrorInvalidConfiguration)
    TLMC_EMU_NAME(cudaErrorInsufficientDriver)
    TLMC_EMU_NAME(cudaErrorInvalidDeviceFunction)
    TLMC_EMU_NAME(cudaErrorNoDevice)
    TLMC_EMU_NAME(cudaErrorInvalidDevice)
    TLMC_EMU_NAME(cudaErrorNoKernelImageForDevice)
    TLMC_EMU_NAME(cudaErrorECCUncorrectable)
    TLMC_EMU_NAME(cudaErrorIllegalAddress)
    TLMC_EMU_NAME(cudaErrorLaunchOutOfResources)
    TLMC_EMU_NAME(cudaErrorLaunchTimeout)
    TLMC_EMU_NAME(cudaErrorAssert)
    TLMC_EMU_NAME(cudaErrorHardwareStackError)
    TLMC_EMU_NAME(cudaErrorIllegalInstruction)
    TLMC_EMU_NAME(cudaErrorMisalignedAddress)
    TLMC_EMU_NAME(cudaErrorInvalidAddressSpace)
    TLMC_EMU_NAME(cudaErrorInvalidPc)
    TLMC_EMU_NAME(cudaErrorLaunchFailure)
    TLMC_EMU_NAME(cudaErrorUnknown)
#undef TLMC_EMU_NAME
  }
  return "cudaErrorUnknown";
}
inline const char* cudaGetErrorString(cudaError_t e) { return cudaGetErrorName(e); }
inline cudaError_t cudaDeviceSynchronize() { return tlmc_emu::state().sticky; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return tlmc_emu::state().sticky; }
inline cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}
// An allocation ends where an inaccessible page begins (its size rounded up to 16 bytes,
// the alignment its start keeps), so that a kernel reading or writing past it faults as on
// a GPU instead of reading what lies beyond; a page below it is inaccessible too.
inline cudaError_t cudaMalloc(void** p, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t used = (std::max<size_t>(bytes, 1) + 15) / 16 * 16;
  const size_t span = (used + page - 1) / page * page;
  void* m =
      mmap(nullptr, span + 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return tlmc_emu::set_error(cudaErrorMemoryAllocation, "");
  char* base = static_cast<char*>(m);
  mprotect(base, page, PROT_NONE);
  mprotect(base + page + span, page, PROT_NONE);
  *p = base + page + (span - used);
  tlmc_emu::state().allocations.push_back({*p, m, span + 2 * page});
  return cudaSuccess;
}
template <typename T>
inline cudaError_t cudaMalloc(T** p, size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes);
}
inline cudaError_t cudaFree(void* p) {
  if (!p) return cudaSuccess;
  auto& all = tlmc_emu::state().allocations;
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i].pointer == p) {
      munmap(all[i].mapping, all[i].bytes);
      all[i] = all.back();
      all.pop_back();
      return cudaSuccess;
    }
  return tlmc_emu::set_error(cudaErrorInvalidValue,
                             "cudaFree of a pointer cudaMalloc did not give");
}
inline cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind) {
  if (tlmc_emu::state().sticky != cudaSuccess) return tlmc_emu::state().sticky;
  if (bytes) std::memmove(to, from, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind,
                                   cudaStream_t = nullptr) {
  return cudaMemcpy(to, from, bytes, kind);
}
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t = nullptr) {
  if (tlmc_emu::state().sticky != cudaSuccess) return tlmc_emu::state().sticky;
  if (bytes) std::memset(p, value, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemset(void* p, int value, size_t bytes) {
  return cudaMemsetAsync(p, value, bytes);
}
template <typename F>
inline cudaError_t cudaFuncSetAttribute(F* kernel, cudaFuncAttribute attribute, int value) {
  if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize) return cudaSuccess;
  auto& optin = tlmc_emu::state().dynamic_shared_optin;
  const void* k = reinterpret_cast<const void*>(kernel);
  for (auto& [known, bytes] : optin)
    if (known == k) {
      bytes = value;
      return cudaSuccess;
    }
  optin.emplace_back(k, value);
  return cudaSuccess;
}

// How the emulated launch is written: TLMC_LAUNCH (tlmc_cuda.h) expands to this.
template <typename... Params, typename... Args>
inline cudaError_t tlmc_emulated_launch(const char* name, void (*kernel)(Params...), dim3 grid,
                                        dim3 block, size_t dynamic_bytes, cudaStream_t,
                                        Args... args) {
  std::tuple<std::decay_t<Params>...> values(args...);
  return tlmc_emu::run_launch(name, reinterpret_cast<const void*>(kernel), grid, block,
                              dynamic_bytes, [kernel, values] { std::apply(kernel, values); });
}

// For the harness: what stopped the last failed launch, the order threads and blocks run in,
// and running only every n-th block (and the last) of each launch.
inline const char* tlmc_emulation_message() { return tlmc_emu::state().message.c_str(); }
inline void tlmc_emulation_set_reverse(bool reverse) {
  tlmc_emu::state().reverse = reverse;
  tlmc_emu::state().reverse_read = true;
}
inline void tlmc_emulation_sample_blocks(long long every) {
  tlmc_emu::state().sample_stride = every;
}
// Forgets a sticky error, as a new CUDA context would start without one.
inline void tlmc_emulation_reset() {
  tlmc_emu::state().sticky = cudaSuccess;
  tlmc_emu::state().last = cudaSuccess;
  tlmc_emu::state().message.clear();
}

#endif  // TLMC_CUDA_EMULATION_RUNTIME_H
