#include "scheduler/tile_product.h"

#include <algorithm>

namespace tlmc::scheduler {
namespace {

bool is_var(const ir::Expr& e, int var) { return e->kind == ir::ExprKind::Var && e->var_id == var; }

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

// tile_operands, with `block` false: the operands alone, whatever the block.
TileOperands match(const ScheduleState& st, int stage, std::string* why, bool block) {
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(stage)];
  const StageState& s = st.stages[static_cast<size_t>(stage)];
  const size_t rank = ts.axes.size();
  if (ts.reduce != ir::ReduceKind::Sum || rank < 2 || ts.body->dtype != ir::DType::Float32)
    return refuse(why, "the stage is no float32 sum over a matrix");
  // One reduction axis k; the others (a 1 x 1 convolution's taps) of one iteration, read at 0.
  std::vector<std::pair<int, ir::Expr>> at_zero;
  int k = -1;
  size_t k_axis = 0;
  for (size_t r = 0; r < ts.reduce_axes.size(); ++r) {
    if (ts.reduce_axes[r].extent == 1) {
      at_zero.emplace_back(ts.reduce_axes[r].var_id, ir::make_int(0));
    } else if (k >= 0) {
      return refuse(why, "the stage sums over more than one axis");
    } else {
      k = ts.reduce_axes[r].var_id;
      k_axis = r;
    }
  }
  if (k < 0) return refuse(why, "the stage sums over no axis of more than one iteration");
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
  // B: a constant only this stage reads, indexed by j and k once each, its other indices 0
  // (B[k, j] of a product, W[j, k, 0, 0] of a 1 x 1 convolution).
  const auto b_dims = [&](const ir::ExprNode* l, size_t* jd, size_t* kd) {
    const std::vector<ir::Expr> idx = indices(l);
    int found = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t zero = -1;
      if (is_var(idx[d], j)) {
        *jd = d;
        found |= 1;
      } else if (is_var(idx[d], k)) {
        *kd = d;
        found |= 2;
      } else if (!ir::is_int_const(idx[d], &zero) || zero != 0) {
        return false;
      }
    }
    return found == 3;
  };
  size_t b_j = 0, b_k = 0;
  if (!b_dims(y, &b_j, &b_k)) std::swap(x, y);
  if (!b_dims(y, &b_j, &b_k)) return refuse(why, "no operand is a matrix read by k and j alone");
  const ir::TeTensor& b = st.te.tensor(y->var_id);
  if (b.stage >= 0 || !b.constant || st.consumers(y->var_id) != std::vector<int>{stage})
    return refuse(why, "the [k, j] operand is no constant only this stage reads");
  // A[..., i, k]: an input, consecutive along k, its leading indices free of i, j and k.
  const std::vector<ir::Expr> a_idx = indices(x);
  const size_t n_a = a_idx.size();
  if (n_a < 2 || !is_var(a_idx[n_a - 1], k) || !is_var(a_idx[n_a - 2], i))
    return refuse(why, "the other operand is not read as [..., i, k]");
  const ir::TeTensor& a = st.te.tensor(x->var_id);
  if (a.stage >= 0)
    return refuse(why, "the [i, k] operand is computed in the kernel, not an input");
  if (!block) {
    why->clear();
    TileOperands out;
    out.a = x->var_id;
    out.b = y->var_id;
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
  const int64_t row_extent = ts.axes[rank - 2].extent;
  bool folded = false;  // rows of two axes
  if (rank >= 3 && extent[rank - 3] > 1) {
    const int i0 = ts.axes[rank - 3].var_id;
    folded = extent[rank - 2] == row_extent && n_a >= 3 && is_var(a_idx[n_a - 3], i0) &&
             a.shape[n_a - 2] == row_extent;
    if (!folded) return refuse(why, "the block spans several rows of positions but not each whole");
  }
  for (size_t d = 0; d + (folded ? 3 : 2) < rank; ++d)
    if (extent[d] != 1) return refuse(why, "the block spans more than one matrix");
  for (size_t d = 0; d + (folded ? 3 : 2) < n_a; ++d)
    for (int v : {i, j, k})
      if (ir::uses_var(a_idx[d], v))
        return refuse(why, "the other operand's leading indices use i, j or k");
  TileOperands out;
  out.a = x->var_id;
  out.b = y->var_id;
  out.i_axis = rank - 2;
  out.j_axis = rank - 1;
  out.m = extent[rank - 2] * (folded ? extent[rank - 3] : 1);
  out.n = extent[rank - 1];
  out.k = ts.reduce_axes[k_axis].extent;
  // B's strides along k and j, as the model lays it out.
  int64_t stride = 1;
  for (size_t d = b.shape.size(); d-- > 0;) {
    if (d == b_j) out.b_j_stride = stride;
    if (d == b_k) out.b_k_stride = stride;
    stride *= b.shape[d];
  }
  out.b_columns = b.shape[b_j];
  out.columns = std::min<int64_t>(16, out.n);
  if (out.m > 16 && out.m % 16 != 0)
    return refuse(why, "the block's " + std::to_string(out.m) +
                           " rows are neither at most 16 nor whole tiles of 16");
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

TileOperands tile_operands(const ScheduleState& st, int stage, std::string* why) {
  return match(st, stage, why, true);
}

bool tile_product_possible(const ScheduleState& st, int stage) {
  std::string why;
  return match(st, stage, &why, false).a >= 0;
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
