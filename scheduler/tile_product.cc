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

}  // namespace

TileOperands tile_operands(const ScheduleState& st, int stage, std::string* why) {
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(stage)];
  const StageState& s = st.stages[static_cast<size_t>(stage)];
  const size_t rank = ts.axes.size();
  if (ts.reduce != ir::ReduceKind::Sum || ts.reduce_axes.size() != 1 || rank < 2 ||
      ts.body->dtype != ir::DType::Float32)
    return refuse(why, "the stage is no float32 sum over one axis of a matrix");
  const ir::Expr& body = ts.body;
  if (body->kind != ir::ExprKind::Binary || body->binary_op != ir::BinaryOp::Mul)
    return refuse(why, "the stage sums no product");
  const ir::ExprNode* x = widened_load(body->args[0]);
  const ir::ExprNode* y = widened_load(body->args[1]);
  if (!x || !y) return refuse(why, "the product's operands are not bfloat16 tensors");
  const int i = ts.axes[rank - 2].var_id, j = ts.axes[rank - 1].var_id,
            k = ts.reduce_axes[0].var_id;
  // B[k, j]: a constant matrix read by this stage alone.
  const auto is_b = [&](const ir::ExprNode* l) {
    return l->args.size() == 2 && is_var(l->args[0], k) && is_var(l->args[1], j);
  };
  if (!is_b(y)) std::swap(x, y);
  if (!is_b(y)) return refuse(why, "no operand is read as [k, j]");
  const ir::TeTensor& b = st.te.tensor(y->var_id);
  if (b.stage >= 0 || !b.constant || st.consumers(y->var_id) != std::vector<int>{stage})
    return refuse(why, "the [k, j] operand is no constant only this stage reads");
  if (std::find(st.packed.begin(), st.packed.end(), y->var_id) != st.packed.end())
    return refuse(why, "the [k, j] operand is packed already");
  // A[..., i, k]: an input, consecutive along k, its leading indices free of i, j and k.
  const size_t n_a = x->args.size();
  if (n_a < 2 || !is_var(x->args[n_a - 1], k) || !is_var(x->args[n_a - 2], i))
    return refuse(why, "the other operand is not read as [..., i, k]");
  for (size_t d = 0; d + 2 < n_a; ++d)
    for (int v : {i, j, k})
      if (ir::uses_var(x->args[d], v))
        return refuse(why, "the other operand's leading indices use i, j or k");
  if (st.te.tensor(x->var_id).stage >= 0)
    return refuse(why, "the [i, k] operand is computed in the kernel, not an input");
  // The block: the region computed at once (contiguous), unit outside its last two axes.
  std::vector<int64_t> extent;
  if (s.attach == Attach::At) {
    const Region r = infer_region(st, stage, s.at_stage, s.at_iter);
    if (r.min.empty()) return refuse(why, "the stage's region is not affine");
    for (size_t d = 0; d < rank; ++d)
      if (r.run[d] != r.extent[d]) return refuse(why, "the stage's region is strided");
    extent = r.extent;
  } else if (s.attach == Attach::Root) {
    for (const ir::Axis& a : ts.axes) extent.push_back(a.extent);
  } else {
    return refuse(why, "the stage is inlined");
  }
  for (size_t d = 0; d + 2 < rank; ++d)
    if (extent[d] != 1) return refuse(why, "the block spans more than one matrix");
  TileOperands out;
  out.a = x->var_id;
  out.b = y->var_id;
  out.i_axis = rank - 2;
  out.j_axis = rank - 1;
  out.m = extent[rank - 2];
  out.n = extent[rank - 1];
  out.k = ts.reduce_axes[0].extent;
  const int64_t columns = b.shape[1];
  out.columns = std::min<int64_t>(16, out.n);
  if (out.m > 16 && out.m % 16 != 0)
    return refuse(why, "the block's " + std::to_string(out.m) +
                           " rows are neither at most 16 nor whole tiles of 16");
  if (out.n % out.columns != 0)
    return refuse(why, "the block's " + std::to_string(out.n) +
                           " columns are neither at most 16 nor whole tiles of 16");
  out.blocked = columns % 16 == 0 && out.n % 16 == 0 && columns % out.n == 0;
  why->clear();
  return out;
}

bool is_bf16_product(const ir::Stage& s) {
  if (s.reduce != ir::ReduceKind::Sum || s.body->kind != ir::ExprKind::Binary ||
      s.body->binary_op != ir::BinaryOp::Mul)
    return false;
  for (const ir::Expr& x : s.body->args)
    if (x->kind != ir::ExprKind::Cast || x->args[0]->dtype != ir::DType::BFloat16) return false;
  return true;
}

std::string kernel_precision(const ScheduleState& st, const ir::Target& target) {
  const std::string unit = target.bf16 == ir::Bf16Unit::Amx ? "AMX tiles" : "vdpbf16ps";
  std::string out;
  for (size_t s = 0; s < st.te.stages.size(); ++s) {
    if (!is_bf16_product(st.te.stages[s])) continue;
    std::string how = "bf16 by " + unit;
    if (!st.stages[s].tensorized) {
      std::string why;
      if (target.bf16 == ir::Bf16Unit::None)
        why = "the target has no bf16 unit";
      else
        tile_operands(st, static_cast<int>(s), &why);
      how = "bf16 widened to float32 (" + (why.empty() ? "the schedule chose loops" : why) + ")";
    }
    out += (out.empty() ? "" : "; ") + st.te.stages[s].name + ": " + how;
  }
  if (!out.empty()) return out;
  for (const ir::TeTensor& t : st.te.tensors)
    if (ir::dtype_is_half(t.dtype)) return "float32, with 16-bit tensors";
  return "float32";
}

}  // namespace tlmc::scheduler
