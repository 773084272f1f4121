#include "scheduler/tile_product.h"

#include <algorithm>
#include <map>
#include <optional>

namespace tlmc::scheduler {
namespace {

// The load under a float32 Cast of a bfloat16 load; null otherwise.
const ir::ExprNode* widened_load(const ir::Expr& e) {
  if (e->kind != ir::ExprKind::Cast || e->dtype != ir::DType::Float32) return nullptr;
  const ir::Expr& in = e->args[0];
  if (in->kind != ir::ExprKind::Load || in->dtype != ir::DType::BFloat16) return nullptr;
  return in.get();
}

TileOperands refuse(std::string* why, const std::string& reason) {
  *why = reason;
  return TileOperands{};
}

// Row-major strides of `shape`, in elements.
std::vector<int64_t> strides_of(const ir::Shape& shape) {
  std::vector<int64_t> out(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) out[d - 1] = out[d] * shape[d];
  return out;
}

// tile_operands, with `block` false: the operands alone, whatever the block.
TileOperands match(const ScheduleState& st, int stage, std::string* why, bool block) {
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(stage)];
  const StageState& s = st.stages[static_cast<size_t>(stage)];
  const size_t rank = ts.axes.size();
  if (ts.reduce != ir::ReduceKind::Sum || rank < 2 || ts.body->dtype != ir::DType::Float32)
    return refuse(why, "the stage is no float32 sum over a matrix");
  // The axes summed over of one iteration (a 1 x 1 convolution's window) read at 0.
  std::vector<std::pair<int, ir::Expr>> at_zero;
  std::vector<const ir::Axis*> summed;  // the others
  for (const ir::Axis& r : ts.reduce_axes) {
    if (r.extent == 1)
      at_zero.emplace_back(r.var_id, ir::make_int(0));
    else
      summed.push_back(&r);
  }
  if (summed.empty()) return refuse(why, "the stage sums over no axis of more than one iteration");
  const ir::Expr& body = ts.body;
  if (body->kind != ir::ExprKind::Binary || body->binary_op != ir::BinaryOp::Mul)
    return refuse(why, "the stage sums no product");
  const ir::ExprNode* x = widened_load(body->args[0]);
  const ir::ExprNode* y = widened_load(body->args[1]);
  if (!x || !y) return refuse(why, "the product's operands are not bfloat16 tensors");
  const auto indices = [&](const ir::ExprNode* l) {
    std::vector<ir::Expr> out;
    for (const ir::Expr& e : l->args) out.push_back(ir::substitute(e, at_zero));
    return out;
  };
  const int i = ts.axes[rank - 2].var_id, j = ts.axes[rank - 1].var_id;
  // B: a constant only this stage reads, each index j or an axis summed over, each of
  // those once, or 0 (B[k, j] of a product, W[j, k, kh, kw] of a convolution).
  std::map<int, size_t> b_dim;  // variable -> B's dimension it indexes
  const auto b_dims = [&](const ir::ExprNode* l) {
    b_dim.clear();
    const std::vector<ir::Expr> idx = indices(l);
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t zero = -1;
      if (idx[d]->kind == ir::ExprKind::Var && !b_dim.count(idx[d]->var_id))
        b_dim[idx[d]->var_id] = d;
      else if (!ir::is_int_const(idx[d], &zero) || zero != 0)
        return false;
    }
    if (b_dim.size() != summed.size() + 1 || !b_dim.count(j)) return false;
    return std::all_of(summed.begin(), summed.end(),
                       [&](const ir::Axis* r) { return b_dim.count(r->var_id) > 0; });
  };
  if (!b_dims(y)) std::swap(x, y);
  if (!b_dims(y)) return refuse(why, "no operand is read by j and the axes summed over alone");
  const ir::TeTensor& b = st.te.tensor(y->var_id);
  if (b.stage >= 0 || !b.constant || st.consumers(y->var_id) != std::vector<int>{stage})
    return refuse(why, "the [k, j] operand is no constant only this stage reads");
  // A: an input, or a stage computed whole at the root; its element read at each variable's
  // step, from its row-major layout.
  const ir::TeTensor& a = st.te.tensor(x->var_id);
  if (a.stage >= 0 && st.stages[static_cast<size_t>(a.stage)].attach != Attach::Root)
    return refuse(why, "the [i, k] operand is computed in the kernel, not whole at the root");
  const std::vector<ir::Expr> a_idx = indices(x);
  const std::vector<int64_t> a_strides = strides_of(a.shape);
  const auto a_step = [&](int var) -> std::optional<int64_t> {
    int64_t total = 0;
    for (size_t d = 0; d < a_idx.size(); ++d) {
      const std::optional<int64_t> c = ir::linear_coefficient(a_idx[d], var);
      if (!c) return std::nullopt;
      total += *c * a_strides[d];
    }
    return total;
  };
  TileOperands out;
  for (const ir::Axis* r : summed)
    if (out.k_var < 0 && a_step(r->var_id) == std::optional<int64_t>(1)) {
      out.k_var = r->var_id;
      out.k = r->extent;
    }
  if (out.k_var < 0)
    return refuse(why, "the other operand is consecutive along no axis summed over");
  const std::optional<int64_t> lda = a_step(i), along_j = a_step(j);
  if (!lda || *lda < 1) return refuse(why, "the other operand's rows are not apart along i");
  if (along_j != std::optional<int64_t>(0)) return refuse(why, "the other operand is read along j");
  const std::vector<int64_t> b_strides = strides_of(b.shape);
  for (const ir::Axis* r : summed) {
    if (r->var_id == out.k_var) continue;
    const std::optional<int64_t> step = a_step(r->var_id);
    if (!step) return refuse(why, "the other operand is not affine in the window's " + r->name);
    out.taps.push_back(TapAxis{r->var_id, r->extent, *step, b_strides[b_dim.at(r->var_id)]});
  }
  if (!out.taps.empty() && out.k < 16)
    return refuse(why, "a window's taps of " + std::to_string(out.k) +
                           " channels each would leave most of the unit's steps of 32 empty");
  out.a = x->var_id;
  out.b = y->var_id;
  out.lda = *lda;
  out.b_j_stride = b_strides[b_dim.at(j)];
  out.b_k_stride = b_strides[b_dim.at(out.k_var)];
  out.b_columns = b.shape[b_dim.at(j)];
  const int64_t row_extent = ts.axes[rank - 2].extent;
  out.rows_run_on =
      rank >= 3 && a_step(ts.axes[rank - 3].var_id) == std::optional<int64_t>(row_extent * *lda);
  if (!block) {
    why->clear();
    return out;
  }
  // The block: the region computed at once (contiguous), unit outside its last two axes but
  // the one before them where the block spans its rows whole (rows of a convolution's
  // positions, one after another in A and in the output alike).
  std::vector<int64_t> extent;
  if (s.attach == Attach::At) {
    const Region r = infer_region(st, stage, s.at_stage, s.at_iter);
    if (r.min.empty()) return refuse(why, "the stage's region is not affine");
    for (size_t d = 0; d < rank; ++d)
      if (r.run[d] != r.extent[d]) return refuse(why, "the stage's region is strided");
    extent = r.extent;
  } else if (s.attach == Attach::Root) {
    for (const ir::Axis& ax : ts.axes) extent.push_back(ax.extent);
  } else {
    return refuse(why, "the stage is inlined");
  }
  bool folded = false;  // rows of two axes
  if (rank >= 3 && extent[rank - 3] > 1) {
    folded = extent[rank - 2] == row_extent && out.rows_run_on;
    if (!folded)
      return refuse(why,
                    "the block spans several rows of positions but not each whole, or the "
                    "other operand's rows do not run on across them");
  }
  for (size_t d = 0; d + (folded ? 3 : 2) < rank; ++d)
    if (extent[d] != 1) return refuse(why, "the block spans more than one matrix");
  out.i_axis = rank - 2;
  out.j_axis = rank - 1;
  out.m = extent[rank - 2] * (folded ? extent[rank - 3] : 1);
  out.n = extent[rank - 1];
  out.rows = tile_rows(out.m);
  out.columns = std::min<int64_t>(16, out.n);
  if (!tile_rows_fit(out.m))
    return refuse(why,
                  "the block's " + std::to_string(out.m) + " rows make no tiles of 4 to 16 rows");
  if (out.n % out.columns != 0)
    return refuse(why, "the block's " + std::to_string(out.n) +
                           " columns are neither at most 16 nor whole tiles of 16");
  out.blocked = out.b_columns % 16 == 0 && out.n % 16 == 0 && out.b_columns % out.n == 0;
  if (std::find(st.packed.begin(), st.packed.end(), y->var_id) != st.packed.end())
    return refuse(why, "the [k, j] operand is packed already");
  why->clear();
  return out;
}

}  // namespace

int64_t tile_rows(int64_t m) {
  for (int64_t r = std::min<int64_t>(16, m); r > 1; --r)
    if (m % r == 0) return r;
  return 1;
}

bool tile_rows_fit(int64_t m) { return m <= 16 || tile_rows(m) >= 4; }

TileOperands tile_operands(const ScheduleState& st, int stage, std::string* why) {
  return match(st, stage, why, true);
}

bool tile_product_possible(const ScheduleState& st, int stage) {
  std::string why;
  return match(st, stage, &why, false).a >= 0;
}

bool tile_product_folds(const ScheduleState& st, int stage) {
  std::string why;
  return match(st, stage, &why, false).rows_run_on;
}

bool is_bf16_product(const ir::Stage& s) {
  if (s.reduce != ir::ReduceKind::Sum || s.body->kind != ir::ExprKind::Binary ||
      s.body->binary_op != ir::BinaryOp::Mul)
    return false;
  for (const ir::Expr& x : s.body->args)
    if (x->kind != ir::ExprKind::Cast || x->args[0]->dtype != ir::DType::BFloat16) return false;
  return true;
}

KernelPrecision kernel_precision(const ScheduleState& st, const ir::Target& target) {
  const std::string unit = target.bf16 == ir::Bf16Unit::Amx ? "AMX tiles" : "vdpbf16ps";
  KernelPrecision out;
  for (size_t s = 0; s < st.te.stages.size(); ++s) {
    if (!is_bf16_product(st.te.stages[s])) continue;
    std::string how = "bf16 by " + unit;
    if (st.stages[s].tensorized) {
      ++out.by_unit;
    } else {
      ++out.widened;
      std::string why;
      if (target.bf16 == ir::Bf16Unit::None)
        why = "the target has no bf16 unit";
      else
        tile_operands(st, static_cast<int>(s), &why);
      how = "bf16 widened to float32 (" + (why.empty() ? "the schedule chose loops" : why) + ")";
    }
    out.text += (out.text.empty() ? "" : "; ") + st.te.stages[s].name + ": " + how;
  }
  if (!out.text.empty()) return out;
  out.text = "float32";
  for (const ir::TeTensor& t : st.te.tensors)
    if (ir::dtype_is_half(t.dtype)) out.text = "float32, with 16-bit tensors";
  return out;
}

}  // namespace tlmc::scheduler
