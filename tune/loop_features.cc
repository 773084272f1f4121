#include "tune/loop_features.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "ir/diagnostic.h"

namespace tlmc::tune {
namespace {

constexpr int64_t kLineBytes = 64;
constexpr size_t kStatementSlots = 3;  // the heaviest statements, by floating-point work
constexpr size_t kAccessSlots = 4;     // a statement's store, then its heaviest loads

// The vector layout, one place: program features, then per statement slot its own
// features, then per access slot the access's.
const char* const kProgramFeatures[] = {
    "flops",      "stores",     "scratch_bytes",  "loop_nests",   "parallel_loops",
    "traffic_l1", "traffic_l2", "traffic_memory", "vector_lanes", "cores",
};
const char* const kStatementFeatures[] = {
    "present",
    "flops",
    "ops_per_iteration",
    "iterations",
    "loops",
    "vector_extent",
    "vector_per_lanes",
    "vector_tail",
    "unrolled",
    "unrolled_loops",
    "parallel_extent",
    "parallel_balance",
    "innermost",
    "working_set_inner",
    "l1_fit_loops",
    "l2_fit_loops",
    "traffic_l1",
    "traffic_l2",
    "traffic_memory",
    "intensity_l1",
    "intensity_l2",
    "intensity_memory",
    "guarded",
    "accumulates",
    "accesses",
};
const char* const kAccessFeatures[] = {
    "present",
    "store",
    "stride_inner",
    "stride_inner_zero",
    "stride_inner_one",
    "vector_contiguous",
    "vector_broadcast",
    "vector_gather",
    "unique_bytes",
    "traffic_l1",
    "traffic_l2",
    "reuse",
    "local",
    "scratch",
};
constexpr size_t kProgramCount = std::size(kProgramFeatures);
constexpr size_t kStatementCount = std::size(kStatementFeatures);
constexpr size_t kAccessCount = std::size(kAccessFeatures);
constexpr size_t kStatementWidth = kStatementCount + kAccessSlots * kAccessCount;

float log_feature(double x) { return static_cast<float>(std::log2(1 + std::max(0.0, x))); }

int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// An integer expression at the given values of the loop variables (indexed by var id);
// loads (data-dependent indices) count as 0.
int64_t eval(const ir::Expr& e, const std::vector<int64_t>& vars) {
  switch (e->kind) {
    case ir::ExprKind::IntImm:
      return e->int_value;
    case ir::ExprKind::FloatImm:
      return static_cast<int64_t>(e->float_value);
    case ir::ExprKind::Var:
      return e->var_id >= 0 && static_cast<size_t>(e->var_id) < vars.size() ? vars[e->var_id] : 0;
    case ir::ExprKind::Load:
      return 0;
    case ir::ExprKind::Cast:
      return eval(e->args[0], vars);
    case ir::ExprKind::Select:
      return eval(e->args[0], vars) ? eval(e->args[1], vars) : eval(e->args[2], vars);
    case ir::ExprKind::Unary: {
      const int64_t a = eval(e->args[0], vars);
      switch (e->unary_op) {
        case ir::UnaryOp::Neg:
          return -a;
        case ir::UnaryOp::Abs:
          return std::llabs(a);
        case ir::UnaryOp::Not:
          return !a;
        case ir::UnaryOp::Exp:
        case ir::UnaryOp::Log:
        case ir::UnaryOp::Sqrt:
        case ir::UnaryOp::Tanh:
        case ir::UnaryOp::Erf:
        case ir::UnaryOp::Sigmoid:
        case ir::UnaryOp::Floor:
          return a;
      }
      return a;
    }
    case ir::ExprKind::Binary: {
      const int64_t a = eval(e->args[0], vars), b = eval(e->args[1], vars);
      switch (e->binary_op) {
        case ir::BinaryOp::Add:
          return a + b;
        case ir::BinaryOp::Sub:
          return a - b;
        case ir::BinaryOp::Mul:
          return a * b;
        case ir::BinaryOp::Div:
          return b == 0 ? 0 : a / b;
        case ir::BinaryOp::FloorDiv:
          return floor_div(a, b);
        case ir::BinaryOp::FloorMod:
          return b == 0 ? 0 : a - floor_div(a, b) * b;
        case ir::BinaryOp::Min:
          return std::min(a, b);
        case ir::BinaryOp::Max:
          return std::max(a, b);
        case ir::BinaryOp::Pow:
        case ir::BinaryOp::ShuffleXor:  // CUDA only: no CPU kernel holds one
          return 0;
        case ir::BinaryOp::LT:
          return a < b;
        case ir::BinaryOp::LE:
          return a <= b;
        case ir::BinaryOp::EQ:
          return a == b;
        case ir::BinaryOp::NE:
          return a != b;
        case ir::BinaryOp::And:
          return a && b;
        case ir::BinaryOp::Or:
          return a || b;
      }
    }
  }
  return 0;
}

// Arithmetic operations of a stored value, index arithmetic excluded.
int64_t count_ops(const ir::Expr& e) {
  switch (e->kind) {
    case ir::ExprKind::IntImm:
    case ir::ExprKind::FloatImm:
    case ir::ExprKind::Var:
    case ir::ExprKind::Load:
      return 0;
    case ir::ExprKind::Cast:
      return count_ops(e->args[0]);
    case ir::ExprKind::Unary:
    case ir::ExprKind::Binary:
    case ir::ExprKind::Select: {
      int64_t n = 1;
      for (const ir::Expr& a : e->args) n += count_ops(a);
      return n;
    }
  }
  return 0;
}

struct Loop {
  int var;
  int64_t extent;
  ir::LoopKind kind;
};

struct Access {
  int buffer;
  ir::Expr index;
  bool store;
  std::vector<int64_t> stride;  // per enclosing loop, outer to inner: index(v=1) - index(0)
  std::vector<int64_t> span;    // per enclosing loop: |index(v=extent-1) - index(0)|
  std::vector<double> bytes;    // per level k = 0..depth: cache bytes the loops k.. touch
  double traffic_l1 = 0, traffic_l2 = 0;
};

struct Statement {
  std::vector<float> features;  // kStatementWidth
  double flops = 0, iterations = 0, traffic_l1 = 0, traffic_l2 = 0, traffic_memory = 0;
};

class Extractor {
 public:
  Extractor(const ir::LoopProgram& p, const ir::Target& t)
      : program_(p), target_(t), vars_(static_cast<size_t>(std::max(p.next_var, 1)), 0) {}

  std::vector<Statement> run() {
    walk(program_.body, false);
    return std::move(statements_);
  }

 private:
  void walk(const ir::Stmt& s, bool guarded) {
    switch (s->kind) {
      case ir::StmtKind::For:
        loops_.push_back({s->var_id, s->extent, s->loop_kind});
        walk(s->body[0], guarded);
        loops_.pop_back();
        return;
      case ir::StmtKind::Seq:
        for (const ir::Stmt& b : s->body) walk(b, guarded);
        return;
      case ir::StmtKind::Allocate:
        walk(s->body[0], guarded);
        return;
      case ir::StmtKind::If:
        walk(s->body[0], true);
        return;
      case ir::StmtKind::Barrier:
      case ir::StmtKind::TileProduct:  // no features of its own: the matrix unit's work
        return;
      case ir::StmtKind::Store:
        statement(*s, guarded);
        return;
    }
  }

  int64_t index_at(const ir::Expr& index, int var, int64_t value) {
    if (var >= 0 && static_cast<size_t>(var) < vars_.size()) vars_[var] = value;
    const int64_t v = eval(index, vars_);
    if (var >= 0 && static_cast<size_t>(var) < vars_.size()) vars_[var] = 0;
    return v;
  }

  void analyse(Access& a) {
    const size_t depth = loops_.size();
    const int64_t base = index_at(a.index, -1, 0);
    for (const Loop& l : loops_) {
      a.stride.push_back(index_at(a.index, l.var, 1) - base);
      a.span.push_back(std::llabs(index_at(a.index, l.var, l.extent - 1) - base));
    }
    const ir::Buffer& buf = program_.buffers[static_cast<size_t>(a.buffer)];
    const double element = static_cast<double>(ir::dtype_size(buf.dtype));
    a.bytes.assign(depth + 1, 0);
    double distinct = 1, span = 1;
    for (size_t k = depth + 1; k-- > 0;) {
      if (k < depth && (a.stride[k] != 0 || a.span[k] != 0)) {
        distinct *= static_cast<double>(loops_[k].extent);
        span += static_cast<double>(a.span[k]);
      }
      const double d =
          std::min({distinct, span, static_cast<double>(std::max<int64_t>(1, buf.size))});
      const double lines = std::min(d, std::ceil(span * element / kLineBytes));
      a.bytes[k] = std::max(1.0, lines) * kLineBytes;
    }
  }

  // The outermost level whose loops' working set (all accesses together) fits `capacity`.
  size_t fit_level(const std::vector<Access>& accesses, double capacity) const {
    size_t k = loops_.size();
    while (k > 0) {
      double ws = 0;
      for (const Access& a : accesses) ws += a.bytes[k - 1];
      if (ws > capacity) break;
      --k;
    }
    return k;
  }

  double runs_outside(size_t level) const {
    double r = 1;
    for (size_t j = 0; j < level; ++j) r *= static_cast<double>(loops_[j].extent);
    return r;
  }

  void statement(const ir::StmtNode& s, bool guarded) {
    std::vector<Access> accesses;
    auto add = [&](int buffer, const ir::Expr& index, bool store) {
      for (const Access& a : accesses)
        if (a.buffer == buffer && ir::expr_equal(a.index, index)) return;
      accesses.push_back(Access{buffer, index, store, {}, {}, {}});
    };
    add(s.buffer, s.index, true);
    bool accumulates = false;
    ir::visit_expr(s.value, [&](const ir::ExprNode& n) {
      if (n.kind != ir::ExprKind::Load) return;
      const ir::Expr index = n.args.at(0);
      if (n.var_id == s.buffer && ir::expr_equal(index, s.index)) accumulates = true;
      add(n.var_id, index, false);
    });
    for (Access& a : accesses) analyse(a);

    const size_t depth = loops_.size();
    const size_t l1 = fit_level(accesses, target_.l1_bytes);
    const size_t l2 = fit_level(accesses, target_.l2_bytes);
    Statement st;
    st.iterations = runs_outside(depth);
    const int64_t ops = count_ops(s.value);
    st.flops = static_cast<double>(ops) * st.iterations;
    for (Access& a : accesses) {
      a.traffic_l1 = std::max(a.bytes[0], a.bytes[l1] * runs_outside(l1));
      a.traffic_l2 = std::max(a.bytes[0], a.bytes[l2] * runs_outside(l2));
      st.traffic_l1 += a.traffic_l1;
      st.traffic_l2 += a.traffic_l2;
      st.traffic_memory += a.bytes[0];
    }

    // Products of the unrolled and of the parallel loops' extents; 0 when there are none.
    int64_t vector_extent = 0, unrolled = 0, unrolled_loops = 0, parallel = 0;
    int vector_loop = -1;
    for (size_t j = 0; j < depth; ++j) {
      const Loop& l = loops_[j];
      if (l.kind == ir::LoopKind::Vectorized) {
        vector_extent = l.extent;
        vector_loop = static_cast<int>(j);
      }
      if (l.kind == ir::LoopKind::Unrolled) {
        unrolled = std::max<int64_t>(unrolled, 1) * l.extent;
        ++unrolled_loops;
      }
      if (l.kind == ir::LoopKind::Parallel) parallel = std::max<int64_t>(parallel, 1) * l.extent;
    }
    const ir::Buffer& out = program_.buffers[static_cast<size_t>(s.buffer)];
    const int lanes = std::max(1, target_.vector_lanes(ir::dtype_size(out.dtype)));
    const int cores = std::max(1, target_.cores);
    // Busy share of the cores over the parallel loop's rounds (1: every round full).
    const int64_t threads = std::max<int64_t>(parallel, 1);
    const int64_t rounds = (threads + cores - 1) / cores;
    const double balance =
        static_cast<double>(threads) / static_cast<double>(rounds * static_cast<int64_t>(cores));

    std::vector<float>& f = st.features;
    f = {1.0F,
         log_feature(st.flops),
         static_cast<float>(ops),
         log_feature(st.iterations),
         static_cast<float>(depth),
         log_feature(static_cast<double>(vector_extent)),
         static_cast<float>(vector_extent) / static_cast<float>(lanes),
         vector_extent % lanes != 0 ? 1.0F : 0.0F,
         log_feature(static_cast<double>(unrolled)),
         static_cast<float>(unrolled_loops),
         log_feature(static_cast<double>(parallel)),
         static_cast<float>(balance),
         depth > 0 ? log_feature(static_cast<double>(loops_.back().extent)) : 0.0F,
         log_feature(depth > 0 ? total_bytes(accesses, depth - 1) : 0),
         static_cast<float>(depth - l1),
         static_cast<float>(depth - l2),
         log_feature(st.traffic_l1),
         log_feature(st.traffic_l2),
         log_feature(st.traffic_memory),
         static_cast<float>(st.flops / std::max(1.0, st.traffic_l1)),
         static_cast<float>(st.flops / std::max(1.0, st.traffic_l2)),
         static_cast<float>(st.flops / std::max(1.0, st.traffic_memory)),
         guarded ? 1.0F : 0.0F,
         accumulates ? 1.0F : 0.0F,
         static_cast<float>(accesses.size())};

    // The store first, then the loads with the most traffic.
    std::stable_sort(accesses.begin(), accesses.end(), [](const Access& a, const Access& b) {
      if (a.store != b.store) return a.store;
      return a.traffic_l1 > b.traffic_l1;
    });
    for (size_t slot = 0; slot < kAccessSlots; ++slot) {
      if (slot >= accesses.size()) {
        f.insert(f.end(), kAccessCount, 0.0F);
        continue;
      }
      const Access& a = accesses[slot];
      const int64_t inner = depth > 0 ? a.stride.back() : 0;
      const int64_t vstride = vector_loop >= 0 ? a.stride[static_cast<size_t>(vector_loop)] : -1;
      const ir::BufferScope scope = program_.buffers[static_cast<size_t>(a.buffer)].scope;
      f.insert(f.end(),
               {1.0F, a.store ? 1.0F : 0.0F, log_feature(static_cast<double>(std::llabs(inner))),
                inner == 0 ? 1.0F : 0.0F, std::llabs(inner) == 1 ? 1.0F : 0.0F,
                std::llabs(vstride) == 1 ? 1.0F : 0.0F, vstride == 0 ? 1.0F : 0.0F,
                vector_loop >= 0 && std::llabs(vstride) > 1 ? 1.0F : 0.0F, log_feature(a.bytes[0]),
                log_feature(a.traffic_l1), log_feature(a.traffic_l2),
                log_feature(st.iterations * 4 / a.bytes[0]),
                scope == ir::BufferScope::Local ? 1.0F : 0.0F,
                scope == ir::BufferScope::Scratch ? 1.0F : 0.0F});
    }
    statements_.push_back(std::move(st));
  }

  static double total_bytes(const std::vector<Access>& accesses, size_t level) {
    double b = 0;
    for (const Access& a : accesses) b += a.bytes[level];
    return b;
  }

  const ir::LoopProgram& program_;
  const ir::Target& target_;
  std::vector<int64_t> vars_;  // all 0 but the one an index is probed at
  std::vector<Loop> loops_;    // enclosing the statement being walked, outer to inner
  std::vector<Statement> statements_;
};

int64_t count_loops(const ir::Stmt& s, ir::LoopKind kind) {
  int64_t n = s->kind == ir::StmtKind::For && s->loop_kind == kind ? 1 : 0;
  for (const ir::Stmt& b : s->body) n += count_loops(b, kind);
  return n;
}

}  // namespace

const std::vector<std::string>& loop_feature_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const char* p : kProgramFeatures) n.push_back(std::string("program.") + p);
    for (size_t s = 0; s < kStatementSlots; ++s) {
      const std::string sp = "s" + std::to_string(s) + ".";
      for (const char* f : kStatementFeatures) n.push_back(sp + f);
      for (size_t a = 0; a < kAccessSlots; ++a)
        for (const char* f : kAccessFeatures) n.push_back(sp + "a" + std::to_string(a) + "." + f);
    }
    return n;
  }();
  return names;
}

std::vector<float> loop_features(const ir::LoopProgram& program, const ir::Target& target) {
  std::vector<Statement> statements = Extractor(program, target).run();
  double flops = 0, l1 = 0, l2 = 0, memory = 0;
  for (const Statement& s : statements) {
    flops += s.flops;
    l1 += s.traffic_l1;
    l2 += s.traffic_l2;
    memory += s.traffic_memory;
  }
  const int64_t nests =
      program.body->kind == ir::StmtKind::Seq ? static_cast<int64_t>(program.body->body.size()) : 1;
  std::vector<float> f = {log_feature(flops),
                          static_cast<float>(statements.size()),
                          log_feature(static_cast<double>(program.scratch_bytes)),
                          static_cast<float>(nests),
                          static_cast<float>(count_loops(program.body, ir::LoopKind::Parallel)),
                          log_feature(l1),
                          log_feature(l2),
                          log_feature(memory),
                          static_cast<float>(target.vector_lanes(4)),
                          static_cast<float>(target.cores)};
  // The heaviest statements: most floating-point work, then most iterations.
  std::stable_sort(statements.begin(), statements.end(),
                   [](const Statement& a, const Statement& b) {
                     if (a.flops != b.flops) return a.flops > b.flops;
                     return a.iterations > b.iterations;
                   });
  for (size_t s = 0; s < kStatementSlots; ++s) {
    if (s < statements.size())
      f.insert(f.end(), statements[s].features.begin(), statements[s].features.end());
    else
      f.insert(f.end(), kStatementWidth, 0.0F);
  }
  TLMC_ASSERT(f.size() == loop_feature_names().size(),
              "features " << f.size() << " of " << loop_feature_names().size());
  return f;
}

}  // namespace tlmc::tune
