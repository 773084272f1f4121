#include "ir/te.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace tlmc::ir {

bool TeProgram::is_output(int tensor_id) const {
  for (int o : outputs)
    if (o == tensor_id) return true;
  return false;
}

std::vector<int> TeProgram::consumers(int tensor_id) const {
  std::vector<int> out;
  for (size_t s = 0; s < stages.size(); ++s) {
    bool reads = false;
    visit_expr(stages[s].body, [&](const ExprNode& n) {
      if (n.kind == ExprKind::Load && n.var_id == tensor_id) reads = true;
    });
    if (reads) out.push_back(static_cast<int>(s));
  }
  return out;
}

Expr reduce_identity(ReduceKind k, DType t) {
  const double inf = std::numeric_limits<double>::infinity();
  switch (k) {
    case ReduceKind::None:
    case ReduceKind::Sum:
      return t == DType::Int64 ? make_int(0) : make_float(0.0, t);
    case ReduceKind::Max:
      return make_float(-inf, t);
    case ReduceKind::Min:
      return make_float(inf, t);
  }
  return nullptr;
}

Expr reduce_combine(ReduceKind k, const Expr& acc, Expr value) {
  switch (k) {
    case ReduceKind::None:
      return value;
    case ReduceKind::Sum:
      return make_binary(BinaryOp::Add, acc, value);
    case ReduceKind::Max:
      return make_binary(BinaryOp::Max, acc, value);
    case ReduceKind::Min:
      return make_binary(BinaryOp::Min, acc, value);
  }
  return nullptr;
}

namespace {

// Prints the program; `canonical` replaces every name by a position.
std::string print_program(const TeProgram& p, bool canonical) {
  std::ostringstream os;
  auto tname = [&](int id) { return canonical ? "t" + std::to_string(id) : p.tensor(id).name; };
  std::map<int, std::string> var_names;
  auto vname = [&](const Axis& a) {
    if (!canonical) return a.name;
    auto it = var_names.find(a.var_id);
    if (it != var_names.end()) return it->second;
    std::string n = "v" + std::to_string(var_names.size());
    var_names[a.var_id] = n;
    return n;
  };
  for (int in : p.inputs) {
    const TeTensor& t = p.tensor(in);
    os << "input " << tname(in) << ": " << dtype_name(t.dtype) << shape_str(t.shape)
       << (t.constant ? " constant" : "") << "\n";
  }
  for (const Stage& s : p.stages) {
    const TeTensor& t = p.tensor(s.output);
    std::vector<std::pair<int, Expr>> renames;
    os << (p.is_output(s.output) ? "output " : "stage ") << tname(s.output) << ": "
       << dtype_name(t.dtype) << shape_str(t.shape) << "\n  [";
    for (size_t i = 0; i < s.axes.size(); ++i) {
      os << (i ? ", " : "") << vname(s.axes[i]);
      renames.emplace_back(s.axes[i].var_id, make_var(s.axes[i].var_id, vname(s.axes[i])));
    }
    os << "] = ";
    if (s.reduce != ReduceKind::None) {
      os << reduce_kind_name(s.reduce) << "(";
      for (size_t i = 0; i < s.reduce_axes.size(); ++i) {
        const Axis& a = s.reduce_axes[i];
        os << (i ? ", " : "") << vname(a) << " < " << a.extent;
        renames.emplace_back(a.var_id, make_var(a.var_id, vname(a)));
      }
      os << ": ";
    }
    Expr body = canonical ? substitute(s.body, renames) : s.body;
    std::string text = expr_str(body, tname);
    if (canonical) {
      // Floats at full precision, so that different constants never share a key.
      std::ostringstream exact;
      visit_expr(body, [&](const ExprNode& n) {
        if (n.kind == ExprKind::FloatImm) {
          char buf[40];
          std::snprintf(buf, sizeof buf, "%.17g,", n.float_value);
          exact << buf;
        }
      });
      if (!exact.str().empty()) text += "  consts " + exact.str();
    }
    os << text << (s.reduce != ReduceKind::None ? ")" : "") << "\n";
  }
  os << "outputs";
  for (int o : p.outputs) os << " " << tname(o);
  os << "\n";
  return os.str();
}

}  // namespace

std::string_view reduce_kind_name(ReduceKind k) {
  switch (k) {
    case ReduceKind::None:
      return "none";
    case ReduceKind::Sum:
      return "sum";
    case ReduceKind::Max:
      return "max";
    case ReduceKind::Min:
      return "min";
  }
  return "?";
}

std::string te_str(const TeProgram& p) { return print_program(p, false); }
std::vector<int> stage_operands(const Stage& s) {
  std::vector<int> out;
  visit_expr(s.body, [&](const ExprNode& n) {
    if (n.kind == ExprKind::Load && std::find(out.begin(), out.end(), n.var_id) == out.end())
      out.push_back(n.var_id);
  });
  return out;
}

std::string te_canonical_str(const TeProgram& p) { return print_program(p, true); }

std::string workload_key(const TeProgram& p) { return text_key(te_canonical_str(p)); }

std::string text_key(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

void verify_te(const TeProgram& p) {
  for (size_t t = 0; t < p.tensors.size(); ++t) {
    const TeTensor& tt = p.tensors[t];
    if (tt.stage >= 0)
      TLMC_ASSERT(p.stages.at(static_cast<size_t>(tt.stage)).output == static_cast<int>(t),
                  "tensor " << tt.name << " and its stage disagree");
  }
  for (size_t s = 0; s < p.stages.size(); ++s) {
    const Stage& st = p.stages[s];
    const TeTensor& out = p.tensor(st.output);
    TLMC_ASSERT(st.axes.size() == out.shape.size(), "stage " << st.name << " has " << st.axes.size()
                                                             << " axes for a rank-"
                                                             << out.shape.size() << " tensor");
    for (size_t i = 0; i < st.axes.size(); ++i)
      TLMC_ASSERT(st.axes[i].extent == out.shape[i],
                  "stage " << st.name << " axis " << i << " extent");
    TLMC_ASSERT((st.reduce == ReduceKind::None) == st.reduce_axes.empty(),
                "stage " << st.name << ": reduce kind and reduce axes disagree");
    TLMC_ASSERT(st.body->dtype == out.dtype, "stage " << st.name << " body type "
                                                      << dtype_name(st.body->dtype) << " vs tensor "
                                                      << dtype_name(out.dtype));
    std::set<int> scope;
    for (const Axis& a : st.axes) scope.insert(a.var_id);
    for (const Axis& a : st.reduce_axes) scope.insert(a.var_id);
    visit_expr(st.body, [&](const ExprNode& n) {
      if (n.kind == ExprKind::Var)
        TLMC_ASSERT(scope.count(n.var_id),
                    "stage " << st.name << " uses variable " << n.name << " out of scope");
      if (n.kind == ExprKind::Load) {
        const TeTensor& src = p.tensor(n.var_id);
        TLMC_ASSERT(n.args.size() == src.shape.size(), "stage " << st.name << " loads " << src.name
                                                                << " with " << n.args.size()
                                                                << " indices");
        TLMC_ASSERT(src.stage < static_cast<int>(s),
                    "stage " << st.name << " reads " << src.name << " before it is computed");
      }
    });
  }
}

}  // namespace tlmc::ir
