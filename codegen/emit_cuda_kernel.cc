#include "codegen/emit_cuda_kernel.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>

#include "codegen/c_expression.h"
#include "codegen/math_functions.h"
#include "ir/diagnostic.h"

namespace tlmc::codegen {
namespace {

using ir::Stmt;
using ir::StmtKind;

// The most registers a thread of a block of `threads` may use: what `regs` registers a block
// (or SM) allow, a multiple of 8 (allocated per warp in units of 256), and no more than
// `per_thread`.
int64_t register_budget(int64_t threads, int64_t regs, int64_t per_thread) {
  const int64_t warps = (threads + 31) / 32;
  return std::min<int64_t>(per_thread, regs / (warps * 32 * 8) * 8);
}

// The qualifier that bounds a kernel's registers: __launch_bounds__, from which ptxas
// derives the hardware's budget for the block, unless the descriptor allows fewer (its
// registers per thread or per block lowered), then __maxnreg__ (CUDA 12.4 on), exact. The
// two cannot qualify one kernel.
std::string register_qualifier(int64_t threads, const ir::GpuLimits& gpu) {
  const int64_t hardware = register_budget(threads, 65536, 255);
  const int64_t budget = register_budget(threads, gpu.regs_per_block, gpu.regs_per_thread);
  if (budget >= hardware) return "__launch_bounds__(" + std::to_string(threads) + ")";
  return "__maxnreg__(" + std::to_string(budget) + ")";
}

class CudaEmitter {
 public:
  CudaEmitter(const ir::LoopProgram& p, const ir::GpuLimits& gpu) : p_(p), gpu_(gpu) {}

  CudaKernelSource run() {
    CudaKernelSource out;
    out.parameters = parameters();
    const std::vector<ir::GpuRoot> roots = ir::gpu_roots(p_);
    std::ostringstream os;
    for (size_t k = 0; k < roots.size(); ++k) {
      CudaLaunch launch;
      launch.kernel = roots[k].kernel;
      const Stmt& s = roots[k].stmt;
      launch.blocks = roots[k].blocks;
      launch.threads = roots[k].threads;
      launch.dynamic_shared_bytes = ir::dynamic_shared_bytes(roots[k], gpu_);
      threads_ = launch.threads;
      local_index_vars_ = ir::local_index_vars(p_, s);
      std::map<int, int64_t> extents;
      index_type_ = indices_fit_32_bits(s, extents) ? "int" : "int64_t";
      // Beyond what a block may declare statically, the shared arrays are placed in the
      // launch's dynamic shared memory, each at its offset.
      placed_.clear();
      if (launch.dynamic_shared_bytes > 0) placed_ = ir::shared_offsets(p_, roots[k]);
      os << "extern \"C\" __global__ void " << register_qualifier(launch.threads, gpu_) << " "
         << launch.kernel << "(" << out.parameters << ") {\n";
      if (!placed_.empty()) os << "  TLMC_DYNAMIC_SHARED_BASE(tlmc_smem);\n";
      for (const ir::Buffer& b : p_.buffers)
        if (b.scope == ir::BufferScope::Scratch && uses_buffer(s, index_of(b)))
          os << "  " << ir::dtype_c_type(b.dtype) << "* __restrict__ " << buf_name(index_of(b))
             << " = (" << ir::dtype_c_type(b.dtype) << "*)(scratch + " << b.scratch_offset
             << ");\n";
      emit(os, s, 1);
      os << "}\n\n";
      out.launches.push_back(launch);
    }
    out.text = os.str();
    return out;
  }

 private:
  int index_of(const ir::Buffer& b) const { return static_cast<int>(&b - p_.buffers.data()); }

  std::string parameters() const {
    std::string s;
    for (size_t i = 0; i < p_.params.size(); ++i) {
      const int b = p_.params[i];
      const ir::Buffer& buf = p_.buffers[static_cast<size_t>(b)];
      s += (static_cast<int>(i) < p_.num_inputs ? "const " : "") +
           std::string(ir::dtype_c_type(buf.dtype)) + "* __restrict__ " + buf_name(b) + ", ";
    }
    return s + "char* __restrict__ scratch";
  }

  // Does `s` hold a barrier or a warp shuffle?
  static bool collective(const Stmt& s) {
    bool found = s->kind == StmtKind::Barrier;
    for (const ir::Expr* e : {&s->index, &s->value, &s->cond})
      if (*e)
        ir::visit_expr(*e, [&](const ir::ExprNode& n) {
          found =
              found || (n.kind == ir::ExprKind::Binary && n.binary_op == ir::BinaryOp::ShuffleXor);
        });
    for (const Stmt& c : s->body) found = found || collective(c);
    return found;
  }

  // Whether C computes `n` (an integer of the IR's int64) in 64 bits whatever type the loop
  // variables have: an element of an int64 tensor, a cast, a literal beyond 32 bits, a helper
  // (c_expression.cc's floor division and remainder of a possibly negative value, integer
  // division, min, max: int64_t functions), or arithmetic or a choice with such an operand
  // (a choice by its two values, not its condition).
  static bool computed_in_64_bits(const ir::ExprNode& n) {
    const auto wide = [](const ir::Expr& e) { return computed_in_64_bits(*e); };
    switch (n.kind) {
      case ir::ExprKind::Load:
      case ir::ExprKind::Cast:
        return n.dtype == ir::DType::Int64;
      case ir::ExprKind::IntImm:
        return n.int_value < INT32_MIN + 1 || n.int_value > INT32_MAX;
      case ir::ExprKind::Select:
        return wide(n.args[1]) || wide(n.args[2]);
      case ir::ExprKind::Unary:
        return !n.args.empty() && wide(n.args[0]);
      case ir::ExprKind::Binary:
        switch (n.binary_op) {
          case ir::BinaryOp::Add:
          case ir::BinaryOp::Sub:
          case ir::BinaryOp::Mul:
            return wide(n.args[0]) || wide(n.args[1]);
          case ir::BinaryOp::FloorDiv:
          case ir::BinaryOp::FloorMod:
            if (non_negative(n.args[0]) && positive_const(n.args[1]))
              return wide(n.args[0]) || wide(n.args[1]);
            return true;
          default:
            return true;
        }
      default:
        return false;
    }
  }

  // Whether every integer value the launch computes in the loop variables' type (a part of
  // an index or of a bounds test made of loop variables and constants) provably lies within
  // 32 bits, the variables over their loops' extents, and every loop's extent too: the
  // launch's loop variables are then `int`, and its index arithmetic 32-bit (half the
  // registers and instructions of 64-bit arithmetic on a GPU). A value C computes in 64 bits
  // anyway (computed_in_64_bits) needs no proof; its 32-bit parts are checked on their own.
  static bool indices_fit_32_bits(const Stmt& s, std::map<int, int64_t>& extents) {
    bool fits = s->kind != StmtKind::For || s->extent <= INT32_MAX;
    for (const ir::Expr* e : {&s->index, &s->value, &s->cond})
      if (*e)
        ir::visit_expr(*e, [&](const ir::ExprNode& n) {
          if (n.dtype != ir::DType::Int64 || computed_in_64_bits(n)) return;
          const auto r = ir::value_range(std::make_shared<const ir::ExprNode>(n), extents);
          fits = fits && r && r->first >= INT32_MIN && r->second <= INT32_MAX;
        });
    if (s->kind == StmtKind::For) extents[s->var_id] = s->extent;
    for (const Stmt& b : s->body) fits = indices_fit_32_bits(b, extents) && fits;
    if (s->kind == StmtKind::For) extents.erase(s->var_id);
    return fits;
  }

  static bool uses_buffer(const Stmt& s, int b) {
    bool found = (s->kind == StmtKind::Store || s->kind == StmtKind::Allocate) && s->buffer == b;
    for (const ir::Expr* e : {&s->index, &s->value, &s->cond})
      if (*e)
        ir::visit_expr(*e, [&](const ir::ExprNode& n) {
          if (n.kind == ir::ExprKind::Load && n.var_id == b) found = true;
        });
    for (const Stmt& c : s->body) found = found || uses_buffer(c, b);
    return found;
  }

  void emit(std::ostream& os, const Stmt& s, int depth) {
    const std::string pad(static_cast<size_t>(depth) * 2, ' ');
    switch (s->kind) {
      case StmtKind::Seq:
        for (const Stmt& b : s->body) emit(os, b, depth);
        return;
      case StmtKind::Store:
        os << pad << buf_name(s->buffer) << "[" << scalar_c(s->index)
           << "] = " << scalar_c(unguarded(s->value)) << ";\n";
        return;
      case StmtKind::Allocate: {
        const ir::Buffer& b = p_.buffers[static_cast<size_t>(s->buffer)];
        os << pad << "{\n" << pad << "  ";
        if (b.scope == ir::BufferScope::Shared && placed_.count(s->buffer))
          os << "TLMC_SHARED_AT(tlmc_smem, " << ir::dtype_c_type(b.dtype) << ", "
             << buf_name(s->buffer) << ", " << placed_.at(s->buffer) << ", " << b.size << ");\n";
        else if (b.scope == ir::BufferScope::Shared)
          os << "TLMC_SHARED(" << ir::dtype_c_type(b.dtype) << ", " << buf_name(s->buffer) << ", "
             << b.size << ");\n";
        else
          os << ir::dtype_c_type(b.dtype) << " " << buf_name(s->buffer) << "[" << b.size << "];\n";
        emit(os, s->body[0], depth + 1);
        os << pad << "}\n";
        return;
      }
      case StmtKind::Barrier:
        os << pad << "__syncthreads();\n";
        return;
      case StmtKind::TileProduct:
        TLMC_ASSERT(false, "a CPU tile product in a CUDA kernel");
        return;
      case StmtKind::If:
        os << pad << "if (" << scalar_c(s->cond) << ") {\n";
        emit(os, s->body[0], depth + 1);
        os << pad << "}\n";
        return;
      case StmtKind::For:
        emit_for(os, s, depth);
        return;
    }
  }

  // `value` without its bounds test where the test holds for every value of the loops around
  // it (a copy's region that lies inside its source): the test is written for the region
  // in general, and nvcc keeps what it cannot prove.
  ir::Expr unguarded(const ir::Expr& value) const {
    if (value->kind == ir::ExprKind::Select && ir::always_true(value->args[0], extents_))
      return value->args[1];
    return value;
  }

  // A vectorised loop of four elements of a global buffer into a shared array (a block's
  // cooperative copy, whose addresses the sketch rule proved multiples of 16, in one row of
  // both): one 16-byte copy. Behind the copy's bounds test, the test of the first and last
  // element for all four (its conditions are ranges of indices that are affine along the
  // row), else the elements one at a time. False where the loop is not such a copy.
  bool emit_copy4(std::ostream& os, const Stmt& s, int depth) {
    const Stmt& b = s->body[0];
    if (s->extent != 4 || b->kind != StmtKind::Store ||
        p_.buffers[static_cast<size_t>(b->buffer)].scope != ir::BufferScope::Shared)
      return false;
    const ir::Expr value = unguarded(b->value);  // (the loop's extent is in extents_)
    const bool guarded = value->kind == ir::ExprKind::Select;
    const ir::Expr& load = guarded ? value->args[1] : value;
    if (load->kind != ir::ExprKind::Load || load->dtype != ir::DType::Float32 ||
        p_.buffers[static_cast<size_t>(load->var_id)].scope == ir::BufferScope::Shared ||
        p_.buffers[static_cast<size_t>(load->var_id)].scope == ir::BufferScope::Local)
      return false;
    const std::string pad(static_cast<size_t>(depth) * 2, ' ');
    const auto lane = [&](const ir::Expr& e, int64_t l) {
      return ir::substitute(e, {{s->var_id, ir::make_int(l)}});
    };
    std::string inner = pad;
    if (guarded) {
      os << pad << "if ((" << scalar_c(lane(value->args[0], 0)) << ") && ("
         << scalar_c(lane(value->args[0], 3)) << ")) {\n";
      inner += "  ";
    }
    os << inner << "TLMC_COPY4(" << buf_name(b->buffer) << ", " << scalar_c(lane(b->index, 0))
       << ", " << buf_name(load->var_id) << ", " << scalar_c(lane(load->args[0], 0)) << ");\n";
    if (guarded) {
      os << pad << "} else {\n";
      const std::string v = var_name(s->var_id);
      os << inner << "for (" << index_type_ << " " << v << " = 0; " << v << " < 4; ++" << v
         << ") {\n";
      emit(os, b, depth + 2);
      os << inner << "}\n" << pad << "}\n";
    }
    return true;
  }

  void emit_for(std::ostream& os, const Stmt& s, int depth) {
    // The loop's variable ranges over [0, extent) inside it (a thread loop's excess threads
    // skip it).
    extents_[s->var_id] = s->extent;
    emit_loop(os, s, depth);
    extents_.erase(s->var_id);
  }

  void emit_loop(std::ostream& os, const Stmt& s, int depth) {
    const std::string pad(static_cast<size_t>(depth) * 2, ' ');
    const std::string v = var_name(s->var_id);
    switch (s->loop_kind) {
      case ir::LoopKind::GpuBlock:
        os << pad << "[[maybe_unused]] const " << index_type_ << " " << v << " = blockIdx.x;\n";
        emit(os, s->body[0], depth);
        return;
      case ir::LoopKind::GpuThread:
        // A loop of fewer iterations than the block has threads (a stage's share of a
        // cooperative copy, a row's elements after its reductions): the others skip it.
        // Never around a barrier or a shuffle, which every thread of the block (warp)
        // must reach: the loops of a stage's share hold none, and a shared reduction's
        // thread loop is as wide as the block (ThreadReduce).
        os << pad << "[[maybe_unused]] const " << index_type_ << " " << v << " = threadIdx.x;\n";
        if (s->extent < threads_) {
          TLMC_ASSERT(!collective(s->body[0]),
                      "a barrier or shuffle in a thread loop narrower than the block: " << v);
          os << pad << "if (" << v << " < " << s->extent << ") {\n";
          emit(os, s->body[0], depth + 1);
          os << pad << "}\n";
          return;
        }
        emit(os, s->body[0], depth);
        return;
      case ir::LoopKind::Unrolled:
        os << pad << "#pragma unroll\n";
        break;
      case ir::LoopKind::Vectorized:
        if (emit_copy4(os, s, depth)) return;
        break;
      case ir::LoopKind::Serial:
      case ir::LoopKind::Parallel:
        // A loop over a thread's local arrays is unrolled whole, so that they live in
        // registers (the analytic model counts on it: scheduler/gpu_cost_model.cc).
        if (local_index_vars_.count(s->var_id)) os << pad << "#pragma unroll\n";
        break;
    }
    os << pad << "for (" << index_type_ << " " << v << " = 0; " << v << " < "
       << int_literal(s->extent) << "; ++" << v << ") {\n";
    emit(os, s->body[0], depth + 1);
    os << pad << "}\n";
  }

  const ir::LoopProgram& p_;
  const ir::GpuLimits& gpu_;
  int64_t threads_ = 1;                 // of the launch being emitted
  std::string index_type_ = "int64_t";  // of its loop variables (indices_fit_32_bits)
  std::map<int, int64_t> placed_;       // its shared arrays' offsets in dynamic shared memory
  std::map<int, int64_t> extents_;      // the loops around the statement being emitted
  std::set<int> local_index_vars_;      // the launch's loops that index a thread's local arrays
};

}  // namespace

CudaKernelSource emit_cuda_kernel(const ir::LoopProgram& p, const ir::GpuLimits& gpu) {
  return CudaEmitter(p, gpu).run();
}

std::string cuda_kernel_preamble(bool half_floats) {
  return "/* inline, not static: nvcc warns of an unused static function. */\n"
         "#define TLMC_HELPER __device__ __forceinline__\n" +
         scalar_helpers(false) + (half_floats ? half_float_helpers() : "") + math_functions(1);
}

}  // namespace tlmc::codegen
