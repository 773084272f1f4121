#include "ir/loop.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>
#include <sstream>

#include "ir/diagnostic.h"

namespace tlmc::ir {
namespace {
std::shared_ptr<StmtNode> stmt(StmtKind k) {
  auto s = std::make_shared<StmtNode>();
  s->kind = k;
  return s;
}
}  // namespace

Stmt make_for(int var_id, const std::string& name, int64_t extent, LoopKind kind, Stmt body) {
  TLMC_ASSERT(extent >= 0, "loop " << name << " has extent " << extent);
  if (extent == 0) return make_seq({});  // a tensor with a zero-sized dimension: nothing to do
  auto s = stmt(StmtKind::For);
  s->var_id = var_id;
  s->var_name = name;
  s->extent = extent;
  s->loop_kind = kind;
  s->body = {std::move(body)};
  return s;
}

Stmt make_seq(std::vector<Stmt> stmts) {
  if (stmts.size() == 1) return stmts[0];
  auto s = stmt(StmtKind::Seq);
  s->body = std::move(stmts);
  return s;
}

Stmt make_store(int buffer, Expr index, Expr value) {
  TLMC_ASSERT(index->dtype == DType::Int64, "store index must be int64");
  auto s = stmt(StmtKind::Store);
  s->buffer = buffer;
  s->index = std::move(index);
  s->value = std::move(value);
  return s;
}

Stmt make_allocate(int buffer, Stmt body) {
  auto s = stmt(StmtKind::Allocate);
  s->buffer = buffer;
  s->body = {std::move(body)};
  return s;
}

Stmt make_if(Expr cond, Stmt then_body) {
  TLMC_ASSERT(cond->dtype == DType::Bool, "if condition must be bool");
  auto s = stmt(StmtKind::If);
  s->cond = std::move(cond);
  s->body = {std::move(then_body)};
  return s;
}

Stmt make_barrier() { return stmt(StmtKind::Barrier); }

Stmt make_tile_product(int c, Expr c_index, TileProduct t) {
  TLMC_ASSERT(t.m >= 1 && t.n >= 1 && t.k >= 1 && t.columns >= 1 && t.n % t.columns == 0,
              "tile product of " << t.m << " x " << t.n << " x " << t.k << " in blocks of "
                                 << t.columns << " columns");
  auto s = stmt(StmtKind::TileProduct);
  s->buffer = c;
  s->index = std::move(c_index);
  s->tile = std::make_shared<const TileProduct>(std::move(t));
  return s;
}

std::vector<Expr> stmt_exprs(const StmtNode& s) {
  std::vector<Expr> out;
  for (const Expr* e : {&s.index, &s.value, &s.cond})
    if (*e) out.push_back(*e);
  if (s.tile) {
    out.push_back(s.tile->a_index);
    out.push_back(s.tile->b_index);
  }
  return out;
}

std::vector<uint8_t> pack_bytes(const Packing& packing, const std::vector<uint8_t>& source,
                                size_t element_bytes) {
  const size_t rank = packing.extents.size();
  TLMC_ASSERT(packing.source_strides.size() == rank,
              "packing of rank " << rank << " has " << packing.source_strides.size() << " strides");
  TLMC_ASSERT(packing.source_limits.empty() || packing.source_limits.size() == rank,
              "packing of rank " << rank << " has " << packing.source_limits.size() << " limits");
  int64_t size = 1;
  for (int64_t e : packing.extents) size *= e;
  const int64_t source_size = static_cast<int64_t>(source.size() / element_bytes);
  std::vector<uint8_t> out(static_cast<size_t>(size) * element_bytes, 0);
  std::vector<int64_t> digit(rank, 0);
  auto term = [&](size_t d) {
    const int64_t t = digit[d] * packing.source_strides[d];
    return packing.source_limits.empty() ? t : std::min(t, packing.source_limits[d]);
  };
  int64_t from = packing.source_offset;
  TLMC_ASSERT(
      packing.zero_weights.empty() || packing.zero_weights.size() == rank,
      "packing of rank " << rank << " has " << packing.zero_weights.size() << " zero weights");
  const auto zeroed = [&] {
    int64_t weight = 0;
    for (size_t d = 0; d < packing.zero_weights.size(); ++d)
      weight += digit[d] * packing.zero_weights[d];
    return !packing.zero_weights.empty() && weight >= packing.zero_from;
  };
  for (int64_t p = 0; p < size; ++p) {
    if (from >= 0 && from < source_size && !zeroed())
      std::memcpy(out.data() + static_cast<size_t>(p) * element_bytes,
                  source.data() + static_cast<size_t>(from) * element_bytes, element_bytes);
    // The next digits, innermost first, keeping `from` in step.
    for (size_t d = rank; d-- > 0;) {
      from -= term(d);
      const bool carry = ++digit[d] == packing.extents[d];
      if (carry) digit[d] = 0;
      from += term(d);
      if (!carry) break;
    }
  }
  return out;
}

std::string packing_str(const Packing& packing) {
  auto list = [](const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + (v[i] == Packing::kNoLimit ? std::string("-") : std::to_string(v[i]));
    return s + "]";
  };
  std::string out = "packed " + list(packing.extents) + " from " +
                    std::to_string(packing.source_offset) + " + " + list(packing.source_strides);
  if (!packing.source_limits.empty()) out += " limited to " + list(packing.source_limits);
  if (!packing.zero_weights.empty())
    out += " zero from " + std::to_string(packing.zero_from) + " by " + list(packing.zero_weights);
  return out;
}

std::set<int> local_index_vars(const LoopProgram& p, const Stmt& s) {
  std::set<int> out;
  const auto add_vars = [&](const Expr& index) {
    visit_expr(index, [&](const ExprNode& v) {
      if (v.kind == ExprKind::Var) out.insert(v.var_id);
    });
  };
  const auto local = [&](int buffer) {
    return p.buffers[static_cast<size_t>(buffer)].scope == BufferScope::Local;
  };
  std::function<void(const Stmt&)> walk = [&](const Stmt& t) {
    if ((t->kind == StmtKind::Store || t->kind == StmtKind::TileProduct) && local(t->buffer))
      add_vars(t->index);
    for (const Expr& e : stmt_exprs(*t))
      visit_expr(e, [&](const ExprNode& n) {
        if (n.kind == ExprKind::Load && local(n.var_id)) add_vars(n.args[0]);
      });
    for (const Stmt& b : t->body) walk(b);
  };
  walk(s);
  return out;
}

std::string_view loop_kind_name(LoopKind k) {
  switch (k) {
    case LoopKind::Serial:
      return "for";
    case LoopKind::Parallel:
      return "parallel";
    case LoopKind::Vectorized:
      return "vectorized";
    case LoopKind::Unrolled:
      return "unrolled";
    case LoopKind::GpuBlock:
      return "blockIdx.x";
    case LoopKind::GpuThread:
      return "threadIdx.x";
  }
  return "?";
}

namespace {
void print(std::ostream& os, const LoopProgram& p, const Stmt& s, int depth) {
  auto bname = [&](int b) { return p.buffers.at(static_cast<size_t>(b)).name; };
  const std::string pad(static_cast<size_t>(depth) * 2, ' ');
  switch (s->kind) {
    case StmtKind::For:
      os << pad << loop_kind_name(s->loop_kind) << " " << s->var_name << " in 0.." << s->extent
         << ":\n";
      print(os, p, s->body[0], depth + 1);
      return;
    case StmtKind::Seq:
      for (const Stmt& c : s->body) print(os, p, c, depth);
      return;
    case StmtKind::Store:
      os << pad << bname(s->buffer) << "[" << expr_str(s->index, bname)
         << "] = " << expr_str(s->value, bname) << "\n";
      return;
    case StmtKind::Barrier:
      os << pad << "barrier\n";
      return;
    case StmtKind::TileProduct: {
      const TileProduct& t = *s->tile;
      os << pad << "tile_product " << t.m << "x" << t.n << "x" << t.k << " " << bname(s->buffer)
         << "[" << expr_str(s->index, bname) << " + i * " << t.ldc << " + j] = " << bname(t.a)
         << "[" << expr_str(t.a_index, bname) << " + i * " << t.lda << " + k] * " << bname(t.b)
         << "[" << expr_str(t.b_index, bname) << ", tiles of " << t.columns << " columns "
         << t.b_tile << " apart, rows " << t.b_row << " apart]";
      if (t.a_taps.size() > 1)
        os << ", summed over " << t.a_taps.size() << " taps (B's " << t.b_tap << " apart)";
      os << "\n";
      return;
    }
    case StmtKind::Allocate: {
      const Buffer& b = p.buffers.at(static_cast<size_t>(s->buffer));
      os << pad << (b.scope == BufferScope::Shared ? "shared " : "local ") << b.name << ": "
         << dtype_name(b.dtype) << "[" << b.size << "]\n";
      print(os, p, s->body[0], depth);
      return;
    }
    case StmtKind::If:
      os << pad << "if " << expr_str(s->cond, bname) << ":\n";
      print(os, p, s->body[0], depth + 1);
      return;
  }
}

void verify(const LoopProgram& p, const Stmt& s, std::set<int>& vars, std::set<int>& locals) {
  auto check_expr = [&](const Expr& e) {
    visit_expr(e, [&](const ExprNode& n) {
      if (n.kind == ExprKind::Var)
        TLMC_ASSERT(vars.count(n.var_id), "variable " << n.name << " used out of its loop");
      if (n.kind == ExprKind::Load) {
        TLMC_ASSERT(n.var_id >= 0 && n.var_id < static_cast<int>(p.buffers.size()),
                    "load of unknown buffer");
        const Buffer& b = p.buffers[static_cast<size_t>(n.var_id)];
        TLMC_ASSERT((b.scope != BufferScope::Local && b.scope != BufferScope::Shared) ||
                        locals.count(n.var_id),
                    "local " << b.name << " read outside its scope");
        TLMC_ASSERT(n.args.size() == 1,
                    "loop-level load of " << b.name << " must have one flat index");
      }
    });
  };
  switch (s->kind) {
    case StmtKind::For:
      TLMC_ASSERT(!vars.count(s->var_id), "loop variable " << s->var_name << " bound twice");
      vars.insert(s->var_id);
      verify(p, s->body[0], vars, locals);
      vars.erase(s->var_id);
      return;
    case StmtKind::Seq:
      for (const Stmt& c : s->body) verify(p, c, vars, locals);
      return;
    case StmtKind::Store: {
      TLMC_ASSERT(s->buffer >= 0 && s->buffer < static_cast<int>(p.buffers.size()),
                  "store to unknown buffer");
      const Buffer& b = p.buffers[static_cast<size_t>(s->buffer)];
      TLMC_ASSERT((b.scope != BufferScope::Local && b.scope != BufferScope::Shared) ||
                      locals.count(s->buffer),
                  "local " << b.name << " written outside its scope");
      TLMC_ASSERT(s->value->dtype == b.dtype,
                  "store of " << dtype_name(s->value->dtype) << " into " << b.name);
      check_expr(s->index);
      check_expr(s->value);
      return;
    }
    case StmtKind::Allocate:
      locals.insert(s->buffer);
      verify(p, s->body[0], vars, locals);
      locals.erase(s->buffer);
      return;
    case StmtKind::If:
      check_expr(s->cond);
      verify(p, s->body[0], vars, locals);
      return;
    case StmtKind::Barrier:
      return;
    case StmtKind::TileProduct: {
      const TileProduct& t = *s->tile;
      for (int b : {s->buffer, t.a, t.b})
        TLMC_ASSERT(b >= 0 && b < static_cast<int>(p.buffers.size()),
                    "tile product of unknown buffer");
      const Buffer& c = p.buffers[static_cast<size_t>(s->buffer)];
      TLMC_ASSERT(c.dtype == DType::Float32 &&
                      p.buffers[static_cast<size_t>(t.a)].dtype == DType::BFloat16 &&
                      p.buffers[static_cast<size_t>(t.b)].dtype == DType::BFloat16,
                  "tile product of other types than bfloat16 into float32");
      TLMC_ASSERT((c.scope != BufferScope::Local && c.scope != BufferScope::Shared) ||
                      locals.count(s->buffer),
                  "local " << c.name << " written outside its scope");
      for (const Expr& e : stmt_exprs(*s)) check_expr(e);
      return;
    }
  }
}
}  // namespace

std::string loop_str(const LoopProgram& p) {
  std::ostringstream os;
  os << "kernel " << p.name << "(";
  for (size_t i = 0; i < p.params.size(); ++i) {
    const Buffer& b = p.buffers[static_cast<size_t>(p.params[i])];
    os << (i ? ", " : "") << b.name << ": " << dtype_name(b.dtype) << "[" << b.size << "]";
    if (b.packing) os << " " << packing_str(*b.packing);
  }
  os << ")";
  if (p.scratch_bytes) os << " scratch " << p.scratch_bytes << " bytes";
  os << "\n";
  print(os, p, p.body, 1);
  return os.str();
}

void verify_loops(const LoopProgram& p) {
  std::set<int> vars, locals;
  verify(p, p.body, vars, locals);
}

namespace {

void flatten_root(const Stmt& s, std::vector<Stmt>& out) {
  if (s->kind == StmtKind::Seq) {
    for (const Stmt& b : s->body) flatten_root(b, out);
    return;
  }
  out.push_back(s);
}

bool bound_to(const Stmt& s, LoopKind kind) {
  return s->kind == StmtKind::For && s->loop_kind == kind;
}

}  // namespace

namespace {

// The most iterations of a thread loop in `s`, outside any other thread loop; 0 if none.
int64_t widest_thread_loop(const Stmt& s) {
  if (s->kind == StmtKind::For && s->loop_kind == LoopKind::GpuThread) return s->extent;
  int64_t most = 0;
  for (const Stmt& b : s->body) most = std::max(most, widest_thread_loop(b));
  return most;
}

}  // namespace

std::vector<GpuRoot> gpu_roots(const LoopProgram& p) {
  std::vector<Stmt> roots;
  flatten_root(p.body, roots);
  std::vector<GpuRoot> out;
  for (const Stmt& s : roots) {
    GpuRoot r{p.name + "_g" + std::to_string(out.size()), s, 1, 1, -1, -1, s};
    if (bound_to(r.body, LoopKind::GpuBlock)) {
      r.blocks = r.body->extent;
      r.block_var = r.body->var_id;
      r.body = r.body->body[0];
    }
    if (bound_to(r.body, LoopKind::GpuThread)) {
      r.threads = r.body->extent;
      r.thread_var = r.body->var_id;
      r.body = r.body->body[0];
    } else {
      r.threads = std::max<int64_t>(1, widest_thread_loop(r.body));
    }
    for (const auto& [buffer, offset] : shared_offsets(p, r)) {
      const Buffer& b = p.buffers[static_cast<size_t>(buffer)];
      r.shared_bytes = std::max<int64_t>(
          r.shared_bytes, offset + b.size * static_cast<int64_t>(dtype_size(b.dtype)));
    }
    out.push_back(r);
  }
  return out;
}

std::map<int, int64_t> shared_offsets(const LoopProgram& p, const GpuRoot& root) {
  std::map<int, int64_t> out;
  int64_t next = 0;
  std::function<void(const Stmt&)> walk = [&](const Stmt& s) {
    if (s->kind == StmtKind::Allocate) {
      const Buffer& b = p.buffers[static_cast<size_t>(s->buffer)];
      if (b.scope == BufferScope::Shared && !out.count(s->buffer)) {
        out[s->buffer] = next;
        next += (b.size * static_cast<int64_t>(dtype_size(b.dtype)) + 15) / 16 * 16;
      }
    }
    for (const Stmt& c : s->body) walk(c);
  };
  walk(root.stmt);
  return out;
}

int64_t dynamic_shared_bytes(const GpuRoot& root, const GpuLimits& gpu) {
  return root.shared_bytes > gpu.smem_per_block ? root.shared_bytes : 0;
}

}  // namespace tlmc::ir
