#include "scheduler/gpu_cost_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "ir/cuda_device.h"
#include "ir/diagnostic.h"

namespace tlmc::scheduler {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::Stmt;
using ir::StmtKind;

// The model's constants, each a property of NVIDIA's data-centre GPUs since sm_80 that the
// descriptor does not carry.
constexpr double kLaunchSeconds = 2e-6;  // one launch after another on a stream
constexpr double kL2OverDram = 3.0;      // L2 bandwidth over DRAM's (A100 about 3.5, H100 2.5)
constexpr double kMathFunctionOps = 16;  // exp, log, tanh, erf...: tlmc's polynomials
constexpr double kBusyWarps = 32;        // resident warps x independent accumulators that
                                         // hide an SM's latencies (8 per scheduler)

// The value of an integer index expression with every variable at `vars` (0 if absent);
// nullopt where it reads memory (an indirect index) or is not an integer.
std::optional<int64_t> evaluate(const Expr& e, const std::map<int, int64_t>& vars) {
  switch (e->kind) {
    case ExprKind::IntImm:
      return e->int_value;
    case ExprKind::Var: {
      const auto v = vars.find(e->var_id);
      return v == vars.end() ? 0 : v->second;
    }
    case ExprKind::Cast:
      return evaluate(e->args[0], vars);
    case ExprKind::Select: {
      const std::optional<int64_t> c = evaluate(e->args[0], vars);
      if (!c) return std::nullopt;
      return evaluate(e->args[*c ? 1 : 2], vars);
    }
    case ExprKind::Binary: {
      const std::optional<int64_t> a = evaluate(e->args[0], vars), b = evaluate(e->args[1], vars);
      if (!a || !b) return std::nullopt;
      switch (e->binary_op) {
        case ir::BinaryOp::Add:
          return *a + *b;
        case ir::BinaryOp::Sub:
          return *a - *b;
        case ir::BinaryOp::Mul:
          return *a * *b;
        case ir::BinaryOp::Div:
          return *b == 0 ? 0 : *a / *b;
        case ir::BinaryOp::FloorDiv:
          return *b == 0 ? 0 : ir::floor_div(*a, *b);
        case ir::BinaryOp::FloorMod:
          return *b == 0 ? 0 : ir::floor_mod(*a, *b);
        case ir::BinaryOp::Min:
          return std::min(*a, *b);
        case ir::BinaryOp::Max:
          return std::max(*a, *b);
        case ir::BinaryOp::LT:
          return *a < *b;
        case ir::BinaryOp::LE:
          return *a <= *b;
        case ir::BinaryOp::EQ:
          return *a == *b;
        case ir::BinaryOp::NE:
          return *a != *b;
        case ir::BinaryOp::And:
          return *a && *b;
        case ir::BinaryOp::Or:
          return *a || *b;
        case ir::BinaryOp::Pow:
        case ir::BinaryOp::ShuffleXor:
          return std::nullopt;
      }
      return std::nullopt;
    }
    case ExprKind::FloatImm:
    case ExprKind::Load:
    case ExprKind::Unary:
      return std::nullopt;
  }
  return std::nullopt;
}

bool float_arithmetic(const ir::ExprNode& e) {
  if (e.kind != ExprKind::Binary || !ir::dtype_is_float(e.dtype)) return false;
  switch (e.binary_op) {
    case ir::BinaryOp::Add:
    case ir::BinaryOp::Sub:
    case ir::BinaryOp::Mul:
    case ir::BinaryOp::Div:
    case ir::BinaryOp::Min:
    case ir::BinaryOp::Max:
      return true;
    default:
      return false;
  }
}

// What one block of one launch does, summed over its threads.
struct BlockWork {
  // Float instructions' issue slots, in lanes (an FMA as one): a warp's instruction takes
  // 32 lanes' slots however few of its lanes are threads of the block.
  double instructions = 0;
  double flops = 0;
  double sector_bytes = 0;
  double shared_wavefronts = 0;
  double register_elements = 0;  // of each thread's local arrays
  double shared_bytes = 0;       // of the shared arrays declared
  double hottest = 1;            // the most times one thread runs one statement
  std::set<int> global_buffers;
};

class LaunchWalker {
 public:
  LaunchWalker(const ir::LoopProgram& p, const Stmt& launch, BlockWork& w) : p_(p), w_(w) {
    unrolled_ = ir::local_index_vars(p, launch);
  }

  // `per_thread`: times each thread runs `s`; `threads`: the threads running it together,
  // numbered by `thread_var`.
  void walk(const Stmt& s, double per_thread, int thread_var, int64_t threads) {
    switch (s->kind) {
      case StmtKind::For:
        if (s->loop_kind == ir::LoopKind::GpuThread) {
          walk(s->body[0], per_thread, s->var_id, s->extent);
        } else if (s->loop_kind == ir::LoopKind::Vectorized) {
          // One access of the loop's elements together (a 16-byte copy, the loop's variable
          // at 0 its first element).
          width_ = s->extent;
          walk(s->body[0], per_thread, thread_var, threads);
          width_ = 1;
        } else {
          loops_.push_back({s->var_id, s->extent,
                            s->loop_kind == ir::LoopKind::Unrolled || unrolled_.count(s->var_id)});
          walk(s->body[0], per_thread * static_cast<double>(s->extent), thread_var, threads);
          loops_.pop_back();
        }
        return;
      case StmtKind::Seq:
        for (const Stmt& b : s->body) walk(b, per_thread, thread_var, threads);
        return;
      case StmtKind::Allocate: {
        const ir::Buffer& b = p_.buffers[static_cast<size_t>(s->buffer)];
        if (b.scope == ir::BufferScope::Local) w_.register_elements += static_cast<double>(b.size);
        if (b.scope == ir::BufferScope::Shared)
          w_.shared_bytes += static_cast<double>(b.size * ir::dtype_size(b.dtype));
        walk(s->body[0], per_thread, thread_var, threads);
        return;
      }
      case StmtKind::If:
        expression(s->cond, per_thread, thread_var, threads);
        walk(s->body[0], per_thread, thread_var, threads);
        return;
      case StmtKind::Store:
        w_.hottest = std::max(w_.hottest, per_thread);
        access(s->buffer, s->index, per_thread, thread_var, threads);
        expression(s->index, per_thread, thread_var, threads);
        expression(s->value, per_thread, thread_var, threads);
        return;
      case StmtKind::Barrier:
        return;
      case StmtKind::TileProduct:
        TLMC_ASSERT(false, "a CPU tile product in a CUDA kernel");
        return;
    }
  }

 private:
  void expression(const Expr& e, double per_thread, int thread_var, int64_t threads) {
    const double all = per_thread * static_cast<double>(threads);
    // A block of 7 threads issues as a warp of 32: the SM's lanes that the other 25 would
    // use stand idle (a block of 48, two warps, wastes 16).
    const double slots = per_thread * 32.0 * std::ceil(static_cast<double>(threads) / 32.0);
    ir::visit_expr(e, [&](const ir::ExprNode& n) {
      if (n.kind == ExprKind::Load) {
        access(n.var_id, n.args[0], per_thread, thread_var, threads);
      } else if (float_arithmetic(n)) {
        w_.flops += all;
        // A multiply feeding an add is one FMA.
        const bool fused =
            (n.binary_op == ir::BinaryOp::Add || n.binary_op == ir::BinaryOp::Sub) &&
            std::any_of(n.args.begin(), n.args.end(), [](const Expr& a) {
              return a->kind == ExprKind::Binary && a->binary_op == ir::BinaryOp::Mul;
            });
        if (!fused) w_.instructions += slots;
      } else if (n.kind == ExprKind::Unary && ir::dtype_is_float(n.dtype) &&
                 n.unary_op != ir::UnaryOp::Neg && n.unary_op != ir::UnaryOp::Abs &&
                 n.unary_op != ir::UnaryOp::Not) {
        w_.flops += all * kMathFunctionOps;
        w_.instructions += slots * kMathFunctionOps;
      }
    });
  }

  // One load or store by each of `threads` threads, `per_thread` times: global memory in
  // sectors of 32 bytes per warp, shared memory in wavefronts per warp, from the addresses of
  // a warp's lanes (the other loops' variables at 0). Inside the loops a compiler unrolls
  // whole (innermost), an index that does not change with a loop is accessed once for all
  // its iterations: a register tile's operands are read once each (a tile of a x b reads
  // a + b operands per step of the reduction, not 2ab).
  void access(int buffer, const Expr& index, double per_thread, int thread_var, int64_t threads) {
    const ir::Buffer& b = p_.buffers[static_cast<size_t>(buffer)];
    if (b.scope == ir::BufferScope::Local) return;
    for (auto l = loops_.rbegin(); l != loops_.rend() && l->unrolled; ++l)
      if (!ir::uses_var(index, l->var)) per_thread /= static_cast<double>(l->extent);
    const int64_t lanes = std::min<int64_t>(threads, 32);
    const double warp_accesses = per_thread * std::ceil(static_cast<double>(threads) / 32);
    const int64_t element = static_cast<int64_t>(ir::dtype_size(b.dtype));
    // Each lane's first byte; nothing where the index reads memory.
    std::vector<int64_t> first;
    for (int64_t lane = 0; lane < lanes; ++lane) {
      const std::optional<int64_t> at =
          thread_var >= 0 ? evaluate(index, {{thread_var, lane}}) : evaluate(index, {});
      if (!at) break;
      first.push_back(*at * element);
    }
    const int64_t bytes = element * width_;  // a lane's
    if (b.scope == ir::BufferScope::Shared) {
      w_.shared_wavefronts += warp_accesses * shared_wavefronts(first, bytes, lanes);
      return;
    }
    w_.global_buffers.insert(buffer);
    const int64_t lane_sectors = (bytes + 31) / 32;  // a lane's, where addresses are unknown
    double sectors = static_cast<double>(lanes * lane_sectors);
    if (static_cast<int64_t>(first.size()) == lanes) {
      std::set<int64_t> touched;
      for (int64_t a : first)
        for (int64_t s = ir::floor_div(a, 32); s <= ir::floor_div(a + bytes - 1, 32); ++s)
          touched.insert(s);
      sectors = static_cast<double>(touched.size());
    }
    w_.sector_bytes += warp_accesses * sectors * 32;
  }

  // The wavefronts of a warp's shared access, lanes' bytes from `first`, `bytes` each: the
  // lanes of each 128 bytes' worth (all 32 for 4 bytes a lane, 8 for 16) at once, each as
  // many wavefronts as the most distinct words one of the 32 banks holds among them.
  static double shared_wavefronts(const std::vector<int64_t>& first, int64_t bytes, int64_t lanes) {
    if (static_cast<int64_t>(first.size()) != lanes) return static_cast<double>(lanes);
    const int64_t phase = std::max<int64_t>(1, 128 / std::max<int64_t>(bytes, 4));
    double wavefronts = 0;
    for (int64_t start = 0; start < lanes; start += phase) {
      std::map<int64_t, std::set<int64_t>> words;  // by bank
      for (int64_t lane = start; lane < std::min(lanes, start + phase); ++lane)
        for (int64_t w = ir::floor_div(first[static_cast<size_t>(lane)], 4);
             w <= ir::floor_div(first[static_cast<size_t>(lane)] + bytes - 1, 4); ++w)
          words[ir::floor_mod(w, 32)].insert(w);
      size_t most = 1;
      for (const auto& [bank, distinct] : words) most = std::max(most, distinct.size());
      wavefronts += static_cast<double>(most);
    }
    return wavefronts;
  }

  struct Loop {
    int var;
    int64_t extent;
    bool unrolled;
  };
  const ir::LoopProgram& p_;
  BlockWork& w_;
  std::set<int> unrolled_;   // loops unrolled whole (ir::local_index_vars, or so marked)
  std::vector<Loop> loops_;  // enclosing the statement walked, outermost first
  int64_t width_ = 1;        // elements a lane moves in one access (a vectorised loop's)
};

GpuLaunchEstimate estimate_launch(const ir::LoopProgram& p, const ir::GpuRoot& root,
                                  const ir::GpuLimits& gpu, const ir::KernelResources* ptxas) {
  GpuLaunchEstimate e;
  e.blocks = root.blocks;
  e.threads = root.threads;
  BlockWork w;
  LaunchWalker(p, root.body, w).walk(root.body, 1, root.thread_var, e.threads);
  ir::KernelResources k;
  k.threads = static_cast<int>(e.threads);
  // Without ptxas's count: a base for indices and addresses, and two registers per element
  // of the thread's local arrays (an accumulator and an operand).
  k.registers = static_cast<int>(std::min(255.0, 32 + 2 * w.register_elements));
  k.dynamic_shared_bytes = static_cast<int>(ir::dynamic_shared_bytes(root, gpu));
  k.shared_bytes = k.dynamic_shared_bytes > 0 ? 0 : static_cast<int>(w.shared_bytes);
  if (ptxas) {
    k = *ptxas;
    k.threads = static_cast<int>(e.threads);
    k.dynamic_shared_bytes = static_cast<int>(ir::dynamic_shared_bytes(root, gpu));
  }
  e.occupancy = ir::occupancy(gpu, k);
  const double blocks = static_cast<double>(e.blocks);
  e.flops = w.flops * blocks;
  e.lane_slots = w.instructions * blocks;
  for (int b : w.global_buffers) {
    const ir::Buffer& buf = p.buffers[static_cast<size_t>(b)];
    e.dram_bytes += static_cast<double>(buf.size * ir::dtype_size(buf.dtype));
  }
  // Spilled registers go to local memory, through L1 and L2 like global memory: assumed
  // stored and loaded once per run of the hottest statement.
  const double spilled = static_cast<double>(k.spill_stores + k.spill_loads) * w.hottest *
                         static_cast<double>(e.threads) * blocks;
  e.sector_bytes = w.sector_bytes * blocks + spilled;
  e.shared_wavefronts = w.shared_wavefronts * blocks;
  if (e.occupancy.blocks_per_sm == 0) {
    e.seconds = 1e9;  // cannot launch: last of every ranking
    e.bound = "limits";
    return e;
  }
  const int lanes = ir::fp32_lanes_per_sm(gpu.sm);
  const double clock = gpu.fp32_gflops * 1e9 / (2.0 * gpu.sms * lanes);
  const double busiest = std::ceil(blocks / gpu.sms);  // blocks on the busiest SM
  const double warps = std::ceil(static_cast<double>(e.threads) / 32);
  const double resident = std::min(busiest, static_cast<double>(e.occupancy.blocks_per_sm)) * warps;
  const double independent = std::clamp(w.register_elements, 1.0, 8.0);
  const double hidden = std::min(1.0, resident * independent / kBusyWarps);
  const double active = std::min(blocks, static_cast<double>(gpu.sms)) / gpu.sms;
  const double bandwidth = gpu.bandwidth_gbs * 1e9 * active * hidden;
  const std::pair<double, const char*> times[] = {
      {busiest * w.instructions / (lanes * clock * hidden), "compute"},
      {e.dram_bytes / bandwidth, "dram"},
      {e.sector_bytes / (kL2OverDram * bandwidth), "l2"},
      {busiest * w.shared_wavefronts / (clock * hidden), "shared"},
      {0, "launch"},
  };
  const auto slowest =
      std::max_element(std::begin(times), std::end(times),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
  e.seconds = slowest->first + kLaunchSeconds;
  e.bound = slowest->second;
  return e;
}

}  // namespace

GpuEstimate estimate_gpu_time(const ir::LoopProgram& p, const ir::GpuLimits& gpu,
                              const std::vector<ir::KernelResources>& resources) {
  const std::vector<ir::GpuRoot> roots = ir::gpu_roots(p);
  TLMC_ASSERT(
      resources.empty() || resources.size() == roots.size(),
      p.name << ": " << resources.size() << " ptxas reports for " << roots.size() << " launches");
  GpuEstimate out;
  for (size_t i = 0; i < roots.size(); ++i) {
    GpuLaunchEstimate e =
        estimate_launch(p, roots[i], gpu, resources.empty() ? nullptr : &resources[i]);
    e.kernel = roots[i].kernel;
    out.seconds += e.seconds;
    out.flops += e.flops;
    out.launches.push_back(std::move(e));
  }
  return out;
}

}  // namespace tlmc::scheduler
