#include "codegen/emit_cuda_kernel.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
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

// The range of an integer expression over its loop variables' ranges; nullopt where it is
// not bounded (it reads memory, converts a float) or leaves int32.
using Range = std::pair<int64_t, int64_t>;
std::optional<Range> int_range(const ir::ExprNode& e, const std::map<int, int64_t>& extents) {
  constexpr int64_t kMax = INT32_MAX, kMin = -INT32_MAX;
  const auto fits = [&](int64_t lo, int64_t hi) -> std::optional<Range> {
    if (lo < kMin || hi > kMax) return std::nullopt;
    return Range{lo, hi};
  };
  switch (e.kind) {
    case ir::ExprKind::IntImm:
      return fits(e.int_value, e.int_value);
    case ir::ExprKind::Var: {
      const auto x = extents.find(e.var_id);
      if (x == extents.end()) return std::nullopt;
      return fits(0, x->second - 1);
    }
    case ir::ExprKind::Cast:
      if (e.args[0]->dtype == ir::DType::Bool) return Range{0, 1};
      if (!ir::dtype_is_float(e.args[0]->dtype)) return int_range(*e.args[0], extents);
      return std::nullopt;
    case ir::ExprKind::Select: {  // its condition is checked where it stands
      const std::optional<Range> a = int_range(*e.args[1], extents);
      const std::optional<Range> b = int_range(*e.args[2], extents);
      if (!a || !b) return std::nullopt;
      return Range{std::min(a->first, b->first), std::max(a->second, b->second)};
    }
    case ir::ExprKind::Binary: {
      if (ir::is_comparison(e.binary_op) || e.binary_op == ir::BinaryOp::And ||
          e.binary_op == ir::BinaryOp::Or)
        return Range{0, 1};  // its operands are checked where they stand
      const std::optional<Range> a = int_range(*e.args[0], extents);
      const std::optional<Range> b = int_range(*e.args[1], extents);
      if (!a || !b) return std::nullopt;
      const auto [al, ah] = *a;
      const auto [bl, bh] = *b;
      switch (e.binary_op) {
        case ir::BinaryOp::Add:
          return fits(al + bl, ah + bh);
        case ir::BinaryOp::Sub:
          return fits(al - bh, ah - bl);
        case ir::BinaryOp::Mul: {
          const int64_t p[] = {al * bl, al * bh, ah * bl, ah * bh};
          return fits(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
        }
        case ir::BinaryOp::Div:
        case ir::BinaryOp::FloorDiv:
        case ir::BinaryOp::FloorMod:
          // Quotients and remainders are no larger than the dividend, or the divisor.
          return fits(-std::max({std::abs(al), std::abs(ah), std::abs(bl), std::abs(bh)}),
                      std::max({std::abs(al), std::abs(ah), std::abs(bl), std::abs(bh)}));
        case ir::BinaryOp::Min:
        case ir::BinaryOp::Max:
          return fits(std::min(al, bl), std::max(ah, bh));
        case ir::BinaryOp::LT:
        case ir::BinaryOp::LE:
        case ir::BinaryOp::EQ:
        case ir::BinaryOp::NE:
        case ir::BinaryOp::And:
        case ir::BinaryOp::Or:
          return Range{0, 1};
        case ir::BinaryOp::Pow:
          return std::nullopt;
      }
      return std::nullopt;
    }
    case ir::ExprKind::FloatImm:
    case ir::ExprKind::Load:
    case ir::ExprKind::Unary:
      return std::nullopt;
  }
  return std::nullopt;
}

// Whether every integer computed in `s` (indices, conditions, integer values) fits int32 over
// the loops' ranges, so that the kernel may count in int: half the registers of int64 and
// single instructions where int64 takes several. Float values are not integers: their
// integer parts (indices of loads) are checked.
bool counts_in_int32(const ir::Stmt& s, std::map<int, int64_t>& extents) {
  // Every integer node, wherever it stands (a loaded integer is unbounded: so is what
  // computes with it).
  const auto integers_fit = [&](const ir::Expr& e) {
    bool ok = true;
    ir::visit_expr(e, [&](const ir::ExprNode& x) {
      if (ok && !ir::dtype_is_float(x.dtype) && x.dtype != ir::DType::Bool &&
          x.kind != ir::ExprKind::Load)
        ok = int_range(x, extents).has_value();
    });
    return ok;
  };
  switch (s->kind) {
    case StmtKind::For: {
      if (s->extent > INT32_MAX) return false;
      extents[s->var_id] = s->extent;
      return counts_in_int32(s->body[0], extents);
    }
    case StmtKind::Seq:
      return std::all_of(s->body.begin(), s->body.end(),
                         [&](const ir::Stmt& b) { return counts_in_int32(b, extents); });
    case StmtKind::Allocate:
      return counts_in_int32(s->body[0], extents);
    case StmtKind::If:
      return integers_fit(s->cond) && counts_in_int32(s->body[0], extents);
    case StmtKind::Store:
      return integers_fit(s->index) && integers_fit(s->value);
    case StmtKind::Barrier:
      return true;
  }
  return false;
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
      launch.kernel = p_.name + "_g" + std::to_string(k);
      const Stmt& s = roots[k].stmt;
      launch.blocks = roots[k].blocks;
      launch.threads = roots[k].threads;
      threads_ = launch.threads;
      std::map<int, int64_t> extents;
      index_type_ = counts_in_int32(s, extents) ? "int" : "int64_t";
      os << "extern \"C\" __global__ void " << register_qualifier(launch.threads, gpu_) << " "
         << launch.kernel << "(" << out.parameters << ") {\n";
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
           << "] = " << scalar_c(s->value) << ";\n";
        return;
      case StmtKind::Allocate: {
        const ir::Buffer& b = p_.buffers[static_cast<size_t>(s->buffer)];
        os << pad << "{\n" << pad << "  ";
        if (b.scope == ir::BufferScope::Shared)
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

  void emit_for(std::ostream& os, const Stmt& s, int depth) {
    const std::string pad(static_cast<size_t>(depth) * 2, ' ');
    const std::string v = var_name(s->var_id);
    switch (s->loop_kind) {
      case ir::LoopKind::GpuBlock:
        os << pad << "[[maybe_unused]] const " << index_type_ << " " << v << " = blockIdx.x;\n";
        emit(os, s->body[0], depth);
        return;
      case ir::LoopKind::GpuThread:
        // A loop of fewer iterations than the block has threads (a stage's share of a
        // cooperative copy): the others skip it. Never around a barrier: a stage's own
        // loops hold none.
        os << pad << "[[maybe_unused]] const " << index_type_ << " " << v << " = threadIdx.x;\n";
        if (s->extent < threads_) {
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
      case ir::LoopKind::Serial:
      case ir::LoopKind::Parallel:
      case ir::LoopKind::Vectorized:
        break;
    }
    os << pad << "for (" << index_type_ << " " << v << " = 0; " << v << " < "
       << int_literal(s->extent) << "; ++" << v << ") {\n";
    emit(os, s->body[0], depth + 1);
    os << pad << "}\n";
  }

  const ir::LoopProgram& p_;
  const ir::GpuLimits& gpu_;
  int64_t threads_ = 1;             // of the launch being emitted
  std::string index_type_ = "int";  // its loop variables' type: int where every count fits
};

}  // namespace

CudaKernelSource emit_cuda_kernel(const ir::LoopProgram& p, const ir::GpuLimits& gpu) {
  return CudaEmitter(p, gpu).run();
}

std::string cuda_kernel_preamble() {
  return "/* inline, not static: nvcc warns of an unused static function. */\n"
         "#define TLMC_HELPER __device__ __forceinline__\n" +
         scalar_helpers(false) + math_functions(1);
}

}  // namespace tlmc::codegen
