// The loop-nest IR: a kernel as nested loops over flat buffers. Produced from a tensor-
// expression program and a schedule (scheduler/lower_schedule.h), consumed by codegen.
// Loads and stores carry one flat element index; every loop has a constant extent.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/target.h"

namespace tlmc::ir {

enum class BufferScope {
  Param,    // passed to the kernel: a subgraph input or output
  Scratch,  // a kernel-lifetime intermediate at a fixed offset of the kernel's scratch memory
  Local,    // a small array declared where its Allocate is (stack; a GPU thread's registers)
  Shared,   // CUDA: an array of the block's shared memory, declared where its Allocate is,
            // written by the block's threads together and read after a Barrier
};

// A constant input read through a packed copy, laid out in the order the loop nest reads it
// (scheduler/pack_constants.h): element p of the copy, whose digits over `extents` are
// d_0..d_n-1 (row-major), is element source_offset + sum of min(d_i * source_strides[i],
// source_limits[i]) of the tensor as the model lays it out, or zero where that falls
// outside the tensor. A limit is the start of a last tile shifted back to end at its
// extent; no limits (an empty list) is no digit limited.
struct Packing {
  std::vector<int64_t> extents;
  std::vector<int64_t> source_strides;
  int64_t source_offset = 0;
  std::vector<int64_t> source_limits;  // empty, or one per digit (kNoLimit: none)
  static constexpr int64_t kNoLimit = INT64_MAX;
  // Zero, too, where the digits weighed by `zero_weights` (one per digit) add up to
  // `zero_from` or more: a reduction padded past its end whatever lies there in the
  // source (a weight read along its rows). Empty: no such bound.
  std::vector<int64_t> zero_weights;
  int64_t zero_from = 0;
  bool operator==(const Packing& o) const {
    return extents == o.extents && source_strides == o.source_strides &&
           source_offset == o.source_offset && source_limits == o.source_limits &&
           zero_weights == o.zero_weights && zero_from == o.zero_from;
  }
};

struct Buffer {
  std::string name;
  DType dtype;
  int64_t size;  // elements
  BufferScope scope;
  int64_t scratch_offset = 0;      // Scratch only: bytes from the start of the scratch memory
  std::optional<Packing> packing;  // Param inputs only: the caller passes a packed copy
};

// Barrier (CUDA): every thread of the block waits there for the others (__syncthreads).
// TileProduct (CPU): a block of a matrix product computed by the CPU's matrix unit (below).
enum class StmtKind { For, Seq, Store, Allocate, If, Barrier, TileProduct };
// GpuBlock and GpuThread loops (CUDA targets) run their iterations as the blocks of the
// grid (blockIdx.x) and the threads of a block (threadIdx.x) of one kernel launch.
enum class LoopKind { Serial, Parallel, Vectorized, Unrolled, GpuBlock, GpuThread };

// C = A B for a block of C of m x n float32 elements (row i at C's index + i * ldc), A of m
// rows of k bfloat16 elements (row i at a_index + i * lda, consecutive along k), B a packed
// constant of bfloat16 pairs (B[2r][j], B[2r + 1][j]), zero past k, read by tiles of
// `rows` rows (m is whole tiles) and `columns` columns (n is whole tiles): from b_index, the
// pair of row r and column j of the block is at (j / columns) * b_tile + r * b_row + 2 * (j %
// columns). Where `a_taps` lists more than one offset (a convolution's window), C is the sum
// over taps t of such products, A's rows from a_index + a_taps[t] and B from b_index + t *
// b_tap. The layouts AMX's tdpbf16ps and AVX512_BF16's vdpbf16ps read (scheduler's
// Tensorize decision).
struct TileProduct {
  int a = -1, b = -1;
  Expr a_index, b_index;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldc = 0;
  int64_t rows = 0, columns = 0;
  int64_t b_row = 0, b_tile = 0;      // elements between B's rows of pairs, and between tiles
  std::vector<int64_t> a_taps = {0};  // A's offset at each tap
  int64_t b_tap = 0;                  // elements between taps' blocks of packed B
};

struct StmtNode;
using Stmt = std::shared_ptr<const StmtNode>;

struct StmtNode {
  StmtKind kind;
  // For
  int var_id = -1;
  std::string var_name;
  int64_t extent = 0;
  LoopKind loop_kind = LoopKind::Serial;
  // Store / Allocate
  int buffer = -1;
  Expr index, value;
  // If
  Expr cond;
  // Seq: all; For / Allocate / If: body[0]
  std::vector<Stmt> body;
  // TileProduct: C is `buffer` from `index`
  std::shared_ptr<const TileProduct> tile;
};

Stmt make_for(int var_id, const std::string& name, int64_t extent, LoopKind kind, Stmt body);
Stmt make_seq(std::vector<Stmt> stmts);
Stmt make_store(int buffer, Expr index, Expr value);
Stmt make_allocate(int buffer, Stmt body);
Stmt make_if(Expr cond, Stmt then_body);
Stmt make_barrier();
// C (buffer `c`, from `c_index`) = the product `t` describes.
Stmt make_tile_product(int c, Expr c_index, TileProduct t);
// The index expressions a statement holds itself (a Store's index and value, an If's
// condition, a TileProduct's three indices), for walks over the expressions of a nest.
std::vector<Expr> stmt_exprs(const StmtNode& s);

struct LoopProgram {
  std::string name;
  std::vector<Buffer> buffers;
  std::vector<int> params;  // buffer ids, in kernel parameter order (inputs, then outputs)
  int num_inputs = 0;       // the first num_inputs params are read-only
  int64_t scratch_bytes = 0;
  Stmt body;
  int next_var = 0;
};

// A CUDA target's kernels: each statement at the root of a loop nest (Seqs flattened) is one
// __global__ function, launched over its bound loops: a GpuBlock loop at its top (else one
// block), then a GpuThread loop right inside it, or else as many threads as the widest of
// the thread loops in sequence inside the block (stages computed one after another by the
// block's threads; a narrower loop leaves the other threads idle; one thread where none).
struct GpuRoot {
  std::string kernel;  // the __global__ function: the program's name, "_g", its index
  Stmt stmt;           // the root statement, bound loops included
  int64_t blocks = 1, threads = 1;
  int block_var = -1, thread_var = -1;  // -1 where unbound (thread_var: or not at the top)
  Stmt body;                            // inside the bound loops at the top
  // The block's shared memory: its Shared arrays one after another, each from a multiple
  // of 16 bytes, in the order their Allocates come (none reuses another's bytes).
  int64_t shared_bytes = 0;
};
std::vector<GpuRoot> gpu_roots(const LoopProgram& p);
// Where a GPU root's Shared arrays lie: each array's byte offset, by buffer id, in the order
// GpuRoot::shared_bytes counts them.
std::map<int, int64_t> shared_offsets(const LoopProgram& p, const GpuRoot& root);
// The shared memory a launch of `root` asks for dynamically: all of it where it exceeds what
// a block may declare statically (`extern __shared__`, the kernel opted in to more), else
// none.
int64_t dynamic_shared_bytes(const GpuRoot& root, const GpuLimits& gpu);

// The packed copy of a tensor's bytes (elements of `element_bytes` each).
std::vector<uint8_t> pack_bytes(const Packing& packing, const std::vector<uint8_t>& source,
                                size_t element_bytes);
// "packed [4, 256, 16] from 16384 + [16, 64, 1]": for dumps.
std::string packing_str(const Packing& packing);

// The variables of the loops in `s` that index a thread's (Local) arrays: on a GPU, loops
// the compiler must unroll whole, or the arrays would not live in registers.
std::set<int> local_index_vars(const LoopProgram& p, const Stmt& s);

std::string_view loop_kind_name(LoopKind k);
std::string loop_str(const LoopProgram& p);  // --dump=loops
// Scoping of loop variables and local buffers, load/store buffers in range; throws
// InternalError.
void verify_loops(const LoopProgram& p);

}  // namespace tlmc::ir
