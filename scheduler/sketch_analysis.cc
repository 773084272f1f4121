#include "scheduler/sketch_analysis.h"

#include <algorithm>

namespace tlmc::scheduler {

bool is_padding(const ir::Stage& s) {
  if (!ir::is_pointwise(s)) return false;
  bool found = false;
  ir::visit_expr(s.body,
                 [&](const ir::ExprNode& n) { found = found || n.kind == ir::ExprKind::Select; });
  return found;
}

bool is_padding_of_reduction(const ScheduleState& st, int stage) {
  const ir::Stage& ts = st.te.stages[static_cast<size_t>(stage)];
  if (!is_padding(ts) || st.te.is_output(ts.output)) return false;
  for (int c : st.consumers(ts.output))
    if (!ir::is_pointwise(st.te.stages[static_cast<size_t>(c)])) return true;
  return false;
}

std::vector<int> attachable_producers(const ScheduleState& st, int root) {
  std::vector<int> out;
  std::set<int> group = {root};
  for (int s = root - 1; s >= 0; --s) {
    const ir::Stage& ts = st.te.stages[static_cast<size_t>(s)];
    if (st.stages[static_cast<size_t>(s)].attach != Attach::Root || ir::is_pointwise(ts) ||
        st.te.is_output(ts.output))
      continue;
    std::vector<int> readers = st.consumers(ts.output);
    bool ok = !readers.empty();
    for (int r : readers) ok = ok && group.count(r);
    if (!ok) continue;
    group.insert(s);
    out.push_back(s);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::set<size_t> axes_indexing(const ir::Stage& stage, int tensor) {
  std::set<size_t> used;
  ir::visit_expr(stage.body, [&](const ir::ExprNode& n) {
    if (n.kind != ir::ExprKind::Load || n.var_id != tensor) return;
    for (const ir::Expr& i : n.args)
      for (size_t a = 0; a < stage.axes.size(); ++a)
        if (ir::uses_var(i, stage.axes[a].var_id)) used.insert(a);
  });
  return used;
}

}  // namespace tlmc::scheduler
