#include "codegen/emit_kernel.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "codegen/c_expression.h"
#include "codegen/math_functions.h"
#include "ir/diagnostic.h"

namespace tlmc::codegen {

using ir::BinaryOp;
using ir::Expr;
using ir::ExprKind;
using ir::Stmt;
using ir::StmtKind;
using ir::UnaryOp;

namespace {

// Does any index, value or condition of `s` mention variable `var`?
bool stmt_uses_var(const ir::Stmt& s, int var) {
  for (const Expr& e : ir::stmt_exprs(*s))
    if (ir::uses_var(e, var)) return true;
  for (const ir::Stmt& b : s->body)
    if (stmt_uses_var(b, var)) return true;
  return false;
}

struct VecCode {
  std::string code;
  bool vector;  // false: a scalar, the same in every lane
};

// Vector code for the body of a loop over `v`, `lanes` elements at a time.
class Vectorizer {
 public:
  // `lanes` picks the vector type: tlmc_vf16, tlmc_vf8, ... (kernel_preamble defines them).
  Vectorizer(int v, int lanes) : v_(v), lanes_(lanes), sfx_(std::to_string(lanes)) {}

  // The helper or type `name` for this width ("tlmc_vload" -> "tlmc_vload16").
  std::string w(const char* name) const { return name + sfx_; }

  // The expression evaluated lane by lane (always safe: a select runs one branch).
  std::string per_lane(const Expr& e) const {
    std::string out = "((" + w("tlmc_vf") + "){";
    for (int k = 0; k < lanes_; ++k) {
      Expr lane = ir::substitute(e, {{v_, ir::make_var(v_, var_name(v_)) + k}});
      out += (k ? ", " : "") + scalar_c(lane);
    }
    return out + "})";
  }

  std::string as_vector(const VecCode& c) const {
    return c.vector ? c.code : w("tlmc_vsplat") + "(" + c.code + ")";
  }

  VecCode vec(const Expr& e) const {
    if (!ir::uses_var(e, v_)) return {scalar_c(e), false};
    TLMC_ASSERT(e->dtype == ir::DType::Float32,
                "vectorizing a " << ir::dtype_name(e->dtype) << " value");
    switch (e->kind) {
      case ExprKind::Load: {
        const auto c = ir::linear_coefficient(e->args[0], v_);
        if (c && *c == 1)
          return {w("tlmc_vload") + "(&" + buf_name(e->var_id) + "[" + scalar_c(e->args[0]) + "])",
                  true};
        return {per_lane(e), true};
      }
      case ExprKind::Unary:
        if (e->unary_op == UnaryOp::Neg) return {"(-" + as_vector(vec(e->args[0])) + ")", true};
        return {"tlmc_v" + std::string(ir::unary_name(e->unary_op)) + sfx_ + "(" +
                    as_vector(vec(e->args[0])) + ")",
                true};
      case ExprKind::Binary: {
        const BinaryOp op = e->binary_op;
        const VecCode a = vec(e->args[0]), b = vec(e->args[1]);
        const std::string va = as_vector(a), vb = as_vector(b);
        switch (op) {
          case BinaryOp::Pow:
            return {"tlmc_vpow" + sfx_ + "(" + va + ", " + vb + ")", true};
          case BinaryOp::Add:
            return {"(" + va + " + " + vb + ")", true};
          case BinaryOp::Sub:
            return {"(" + va + " - " + vb + ")", true};
          case BinaryOp::Mul:
            return {"(" + va + " * " + vb + ")", true};
          case BinaryOp::Div:
            return {"(" + va + " / " + vb + ")", true};
          case BinaryOp::Min:
            return {w("tlmc_vmin") + "(" + va + ", " + vb + ")", true};
          case BinaryOp::Max:
            return {w("tlmc_vmax") + "(" + va + ", " + vb + ")", true};
          default:
            return {per_lane(e), true};
        }
      }
      case ExprKind::Select: {
        // The same choice for every lane (a padded window's bounds test, along the
        // channels): one test choosing between two vectors, of which only one is read.
        if (!ir::uses_var(e->args[0], v_))
          return {"(" + scalar_c(e->args[0]) + " ? " + as_vector(vec(e->args[1])) + " : " +
                      as_vector(vec(e->args[2])) + ")",
                  true};
        if (!blendable(e)) return {per_lane(e), true};
        const Expr& c = e->args[0];
        const std::string mask = "(" + as_vector(vec(c->args[0])) + " " +
                                 std::string(ir::binary_name(c->binary_op)) + " " +
                                 as_vector(vec(c->args[1])) + ")";
        return {w("tlmc_vselect") + "(" + mask + ", " + as_vector(vec(e->args[1])) + ", " +
                    as_vector(vec(e->args[2])) + ")",
                true};
      }
      case ExprKind::Cast: {
        // A bfloat16 operand's consecutive elements: one load, widened in registers.
        const Expr& x = e->args[0];
        if (x->kind == ExprKind::Load && x->dtype == ir::DType::BFloat16) {
          const auto c = ir::linear_coefficient(x->args[0], v_);
          if (c && *c == 1)
            return {w("tlmc_vloadbf16_") + "(&" + buf_name(x->var_id) + "[" + scalar_c(x->args[0]) +
                        "])",
                    true};
        }
        // A choice the same for every lane between bfloat16 values (a padded window's
        // bounds test around an operand's load): the choice between the values widened.
        if (x->kind == ExprKind::Select && !ir::uses_var(x->args[0], v_))
          return vec(ir::make_select(x->args[0], ir::make_cast(e->dtype, x->args[1]),
                                     ir::make_cast(e->dtype, x->args[2])));
        return {per_lane(e), true};
      }
      case ExprKind::IntImm:
      case ExprKind::FloatImm:
      case ExprKind::Var:
        return {per_lane(e), true};
    }
    return {per_lane(e), true};
  }

 private:
  // A select can evaluate both branches for all lanes when its condition compares floats
  // and every lane-varying load of its branches is also read by the condition (so it is
  // in bounds for every lane).
  bool blendable(const Expr& e) const {
    const Expr& c = e->args[0];
    if (c->kind != ExprKind::Binary || !ir::is_comparison(c->binary_op) ||
        c->binary_op == BinaryOp::And || c->binary_op == BinaryOp::Or ||
        c->args[0]->dtype != ir::DType::Float32)
      return false;
    std::vector<Expr> cond_loads;
    collect_loads(c, cond_loads);
    std::vector<Expr> branch_loads;
    collect_loads(e->args[1], branch_loads);
    collect_loads(e->args[2], branch_loads);
    for (const Expr& l : branch_loads) {
      bool covered = false;
      for (const Expr& k : cond_loads) covered = covered || ir::expr_equal(l, k);
      if (!covered) return false;
    }
    return true;
  }

  void collect_loads(const Expr& e, std::vector<Expr>& out) const {
    if (e->kind == ExprKind::Load && ir::uses_var(e, v_)) out.push_back(e);
    for (const Expr& a : e->args) collect_loads(a, out);
  }

  int v_;
  int lanes_;
  std::string sfx_;
};

// Loops annotated unroll up to this extent, and vectorized loops of up to this many whole
// vectors, are written out copy by copy rather than left to the C compiler.
constexpr int64_t kMaxExplicitUnroll = 32;
constexpr int64_t kMaxExplicitVectorChunks = 8;
// Serial loops over the rows of a register tile up to this extent are written out too.
constexpr int64_t kMaxTileRowUnroll = 8;
// No loop is written out where its copies would hold more statements than this (inner loops
// first: they hold the register tiles): nested unrolled loops multiply, and a schedule drawn
// at random wrote a padding nest 9 x 2 x 12 x 6 times, 1.2 MB of C that the C compiler took
// 150 s over. Such a loop is left to the C compiler, unannotated.
constexpr int64_t kMaxWrittenOut = 512;
// The depth of the parts of an AMX tile product's reduction (a multiple of 32).
constexpr int64_t kAmxDepth = 256;
// The narrowest vectors used for remainders: 4 floats, one SSE register.
constexpr int kMinVectorLanes = 4;

// C code over `count` items in groups of `size`: a loop over the whole groups, `var` the
// first item of each, then the rest as one group; `group(n, first)` writes a group of n
// items from `first` (a C expression).
std::string in_groups(int64_t count, int64_t size, const std::string& var,
                      const std::function<std::string(int64_t, const std::string&)>& group) {
  std::ostringstream o;
  if (count >= size)
    o << "  for (int64_t " << var << " = 0; " << var << " + " << size << " <= " << count << "; "
      << var << " += " << size << ") {\n"
      << group(size, var) << "  }\n";
  if (count % size)
    o << "  {\n" << group(count % size, std::to_string(count / size * size)) << "  }\n";
  return o.str();
}

class KernelEmitter {
 public:
  KernelEmitter(const ir::LoopProgram& p, const ir::Target& t, const std::string& rt)
      : p_(p), target_(t), rt_(rt) {}

  KernelSource run() {
    KernelSource out;
    std::ostringstream sig;
    sig << "static void " << p_.name << "(";
    for (size_t i = 0; i < p_.params.size(); ++i) {
      const int b = p_.params[i];
      sig << (i ? ", " : "") << pointer_type(b) << " restrict " << buf_name(b);
    }
    sig << (p_.params.empty() ? "" : ", ") << "char* restrict scratch)";
    out.signature = sig.str();
    std::ostringstream body;
    body << out.signature << " {\n  (void)scratch;\n";
    for (size_t b = 0; b < p_.buffers.size(); ++b) {
      const ir::Buffer& buf = p_.buffers[b];
      if (buf.scope != ir::BufferScope::Scratch) continue;
      body << "  " << ir::dtype_c_type(buf.dtype) << "* restrict " << buf_name(static_cast<int>(b))
           << " = (" << ir::dtype_c_type(buf.dtype) << "*)(scratch + " << buf.scratch_offset
           << ");\n";
    }
    emit(body, p_.body, 1, false);
    body << "}\n";
    out.text = helpers_.str() + body.str();
    return out;
  }

 private:
  bool is_input(int b) const {
    for (int i = 0; i < p_.num_inputs; ++i)
      if (p_.params[static_cast<size_t>(i)] == b) return true;
    return false;
  }

  std::string pointer_type(int b) const {
    const ir::Buffer& buf = p_.buffers[static_cast<size_t>(b)];
    return std::string(is_input(b) ? "const " : "") + std::string(ir::dtype_c_type(buf.dtype)) +
           "*";
  }

  static std::string indent(int depth) { return std::string(static_cast<size_t>(depth) * 2, ' '); }

  void emit(std::ostream& os, const Stmt& s, int depth, bool in_parallel) {
    switch (s->kind) {
      case StmtKind::Seq:
        for (const Stmt& c : s->body) emit(os, c, depth, in_parallel);
        return;
      case StmtKind::Store:
        os << indent(depth) << buf_name(s->buffer) << "[" << scalar_c(s->index)
           << "] = " << scalar_c(s->value) << ";\n";
        return;
      case StmtKind::Allocate: {
        const ir::Buffer& b = p_.buffers[static_cast<size_t>(s->buffer)];
        os << indent(depth) << "{\n"
           << indent(depth + 1) << ir::dtype_c_type(b.dtype) << " " << buf_name(s->buffer) << "["
           << b.size << "]" << (b.size > 1 ? " __attribute__((aligned(64)))" : "") << ";\n";
        emit(os, s->body[0], depth + 1, in_parallel);
        os << indent(depth) << "}\n";
        return;
      }
      case StmtKind::If:
        os << indent(depth) << "if (" << scalar_c(s->cond) << ") {\n";
        emit(os, s->body[0], depth + 1, in_parallel);
        os << indent(depth) << "}\n";
        return;
      case StmtKind::Barrier:
        TLMC_ASSERT(false, "a CUDA barrier in a CPU kernel");
        return;
      case StmtKind::TileProduct: {
        TLMC_ASSERT(target_.bf16 != ir::Bf16Unit::None, "a bf16 tile product for target "
                                                            << target_.name
                                                            << ", which has no bf16 unit");
        const std::string fn = p_.name + "_tile" + std::to_string(tiles_++);
        helpers_ << (target_.bf16 == ir::Bf16Unit::Amx ? tile_product_function(fn, *s->tile)
                                                       : dot_product_function(fn, *s->tile));
        os << indent(depth) << fn << "(&" << buf_name(s->buffer) << "[" << scalar_c(s->index)
           << "], &" << buf_name(s->tile->a) << "[" << scalar_c(s->tile->a_index) << "], &"
           << buf_name(s->tile->b) << "[" << scalar_c(s->tile->b_index) << "]);\n";
        return;
      }
      case StmtKind::For:
        emit_for(os, s, depth, in_parallel);
        return;
    }
  }

  // A tile product function's first lines: what it computes, and its taps' offsets of A.
  static void comment_and_taps(std::ostream& f, const ir::TileProduct& t) {
    f << "  /* c[" << t.m << " x " << t.n << "] = a[" << t.m << " x " << t.k << "] b[" << t.k
      << " x " << t.n << "]";
    if (t.a_taps.size() > 1) f << ", summed over " << t.a_taps.size() << " taps";
    f << " */\n";
    if (t.a_taps.size() <= 1) return;
    f << "  static const int64_t taps[" << t.a_taps.size() << "] = {";
    for (size_t i = 0; i < t.a_taps.size(); ++i) f << (i ? ", " : "") << t.a_taps[i];
    f << "};\n";
  }

  // The head of a loop over a tile product's taps, naming A and B at the tap `at` and `bt`.
  static std::string tap_loop(const ir::TileProduct& t) {
    std::ostringstream o;
    o << "for (int64_t tap = 0; tap < " << t.a_taps.size() << "; ++tap) {\n"
      << "      const uint16_t* at = a + taps[tap];\n"
      << "      const uint16_t* bt = b + tap * " << t.b_tap << ";";
    return o.str();
  }

  // A tile product as a function of AVX512_BF16 instructions, for a CPU without AMX: each
  // vdpbf16ps multiplies 16 columns' pairs of B (one packed row of pairs) by a pair of A's
  // row broadcast to every lane, adding both products into 16 float32 accumulators. A
  // register block of up to 6 rows x 4 vectors (24 accumulators, 4 vectors of B, a
  // broadcast) runs over the whole reduction and is stored once; narrower blocks where the
  // rows or vectors run out. Blocks of fewer than 16 columns load and store under a mask.
  // The last pair of an odd reduction takes A's last element alone (its pair would read
  // past the row). Summed over taps, a register block takes every tap's pairs in turn.
  std::string dot_product_function(const std::string& fn, const ir::TileProduct& t) {
    constexpr int64_t kRows = 6, kVectors = 4;
    const int64_t w = t.columns, vectors = t.n / w, pairs = (t.k + 1) / 2;
    const bool odd = t.k % 2 != 0;
    const std::string mask = w == 16 ? "" : std::to_string((1 << w) - 1);
    const bool taps = t.a_taps.size() > 1;
    const std::string a = taps ? "at" : "a", b = taps ? "bt" : "b";
    std::ostringstream f;
    f << "__attribute__((target(\"avx512f,avx512bf16\"))) static void " << fn
      << "(float* restrict c, const uint16_t* restrict a, const uint16_t* restrict b) {\n";
    comment_and_taps(f, t);
    // One register block: rows r0.. r0 + nr, vectors v0.. v0 + nv (C expressions r0, v0).
    auto block_code = [&](int64_t nr, int64_t nv, const std::string& r0, const std::string& v0) {
      std::ostringstream o;
      o << "    {\n";
      for (int64_t x = 0; x < nr; ++x)
        for (int64_t y = 0; y < nv; ++y)
          o << "      __m512 acc" << x << "_" << y << " = _mm512_setzero_ps();\n";
      auto load_b = [&](int64_t y, const std::string& p) {
        o << "        const __m512bh b" << y << " = (__m512bh)";
        if (mask.empty())
          o << "_mm512_loadu_si512(";
        else
          o << "_mm512_maskz_loadu_epi32(" << mask << ", ";
        o << b << " + (" << v0 << " + " << y << ") * " << t.b_tile << " + " << p << " * " << t.b_row
          << ");\n";
      };
      auto products = [&](bool last_alone) {
        for (int64_t x = 0; x < nr; ++x) {
          std::ostringstream row_at;
          row_at << a << " + (" << r0 << " + " << x << ") * " << t.lda << " + 2 * p";
          const std::string row = row_at.str();
          o << "        {\n          int32_t pair;\n";
          if (last_alone)
            o << "          pair = (int32_t)*(" << row << ");\n";
          else
            o << "          memcpy(&pair, " << row << ", 4);\n";
          o << "          const __m512bh ax = (__m512bh)_mm512_set1_epi32(pair);\n";
          for (int64_t y = 0; y < nv; ++y)
            o << "          acc" << x << "_" << y << " = _mm512_dpbf16_ps(acc" << x << "_" << y
              << ", ax, b" << y << ");\n";
          o << "        }\n";
        }
      };
      const int64_t whole = odd ? pairs - 1 : pairs;
      if (taps) o << "      " << tap_loop(t) << "\n";
      if (whole > 0) {
        o << "      for (int64_t p = 0; p < " << whole << "; ++p) {\n";
        for (int64_t y = 0; y < nv; ++y) load_b(y, "p");
        products(false);
        o << "      }\n";
      }
      if (odd) {
        o << "      {\n        const int64_t p = " << whole << ";\n";
        for (int64_t y = 0; y < nv; ++y) load_b(y, "p");
        products(true);
        o << "      }\n";
      }
      if (taps) o << "      }\n";
      for (int64_t x = 0; x < nr; ++x)
        for (int64_t y = 0; y < nv; ++y) {
          o << "      " << (mask.empty() ? "_mm512_storeu_ps(" : "_mm512_mask_storeu_ps(")
            << "c + (" << r0 << " + " << x << ") * " << t.ldc << " + (" << v0 << " + " << y
            << ") * " << w << (mask.empty() ? "" : ", " + mask) << ", acc" << x << "_" << y
            << ");\n";
        }
      o << "    }\n";
      return o.str();
    };
    f << in_groups(t.m, kRows, "r0", [&](int64_t nr, const std::string& r0) {
      return in_groups(vectors, kVectors, "v0", [&](int64_t nv, const std::string& v0) {
        return block_code(nr, nv, r0, v0);
      });
    });
    f << "}\n\n";
    return f.str();
  }

  // A tile product as a function of AMX instructions (ir::TileProduct). Eight tiles: C in
  // 0-3 (2 x 2 tiles of `rows` x `columns` float32), A in 4-5 (`rows` x 32 bfloat16), B in
  // 6-7 (16 pairs of rows x `columns` pairs); each step of 32 along k loads two tiles of A
  // and two of B and makes four products. The reduction runs in parts of kAmxDepth: for each,
  // every block of C (zeroed in the first, loaded from C in the others) takes the part's
  // steps and is stored, the column blocks inside the row blocks, so that the rows of A a
  // part reads (2 x 16 x kAmxDepth bfloat16, 16 KiB) stay in L1 while B streams from L2. A
  // last step of fewer than 32 reads A through a copy padded with zeros (B is padded in its
  // packing). Blocks of one tile row or column where the tiles do not pair up. Summed over
  // taps (a convolution's window), each block takes every tap's steps of the part in turn,
  // A and B from the tap's offsets: its accumulators stay in their tiles across the window.
  std::string tile_product_function(const std::string& fn, const ir::TileProduct& t) {
    const int64_t rows = t.rows, row_tiles = t.m / rows;
    const int64_t w = t.columns, column_tiles = t.n / w;
    const int64_t whole = t.k / 32 * 32;
    TLMC_ASSERT(rows >= 1 && rows <= 16 && row_tiles * rows == t.m && column_tiles * w == t.n,
                "tile product of a partial tile");
    const bool taps = t.a_taps.size() > 1;
    const std::string a = taps ? "at" : "a", b = taps ? "bt" : "b";
    std::ostringstream f;
    f << "__attribute__((target(\"amx-tile,amx-bf16\"))) static void " << fn
      << "(float* restrict c, const uint16_t* restrict a, const uint16_t* restrict b) {\n";
    comment_and_taps(f, t);
    f << "  static const struct tlmc_tile_config config = {1, 0, {0}, {";
    for (int i = 0; i < 16; ++i)
      f << (i ? ", " : "") << (i < 4 ? 4 * w : i < 6 ? 64 : i < 8 ? 4 * w : 0);
    f << "}, {";
    for (int i = 0; i < 16; ++i) f << (i ? ", " : "") << (i < 6 ? rows : i < 8 ? 16 : 0);
    f << "}};\n  _tile_loadconfig(&config);\n";
    if (whole < t.k)
      f << "  uint16_t tail[" << 2 * rows * 32 << "] __attribute__((aligned(64)));\n"
        << "  memset(tail, 0, sizeof tail);\n";
    const std::string lda = std::to_string(t.lda), ldc = std::to_string(t.ldc);
    // One block of r x q tiles, its first row tile ti and column tile tj (C expressions).
    auto c_tile = [&](int x, int y, const std::string& ti, const std::string& tj) {
      return "c + (" + ti + " * " + std::to_string(rows) + " + " + std::to_string(x * rows) +
             ") * " + ldc + " + (" + tj + " + " + std::to_string(y) + ") * " + std::to_string(w) +
             ", " + std::to_string(4 * t.ldc);
    };
    auto tile_block = [&](int r, int q, const std::string& ti, const std::string& tj) {
      std::ostringstream o;
      o << "    {\n";
      o << "      if (kb == 0) {\n";
      for (int x = 0; x < r; ++x)
        for (int y = 0; y < q; ++y) o << "        _tile_zero(" << 2 * x + y << ");\n";
      o << "      } else {\n";
      for (int x = 0; x < r; ++x)
        for (int y = 0; y < q; ++y)
          o << "        _tile_loadd(" << 2 * x + y << ", " << c_tile(x, y, ti, tj) << ");\n";
      o << "      }\n";
      auto step = [&](const std::string& kk, bool tail) {
        for (int x = 0; x < r; ++x) {
          if (tail)
            o << "      _tile_loadd(" << 4 + x << ", tail + " << x * rows * 32 << ", 64);\n";
          else
            o << "      _tile_loadd(" << 4 + x << ", " << a << " + (" << ti << " * " << rows
              << " + " << x * rows << ") * " << lda << " + " << kk << ", " << 2 * t.lda << ");\n";
        }
        for (int y = 0; y < q; ++y)
          o << "      _tile_loadd(" << 6 + y << ", " << b << " + (" << tj << " + " << y << ") * "
            << t.b_tile << " + " << kk << " / 2 * " << t.b_row << ", " << 2 * t.b_row << ");\n";
        for (int x = 0; x < r; ++x)
          for (int y = 0; y < q; ++y)
            o << "      _tile_dpbf16ps(" << 2 * x + y << ", " << 4 + x << ", " << 6 + y << ");\n";
      };
      if (taps) o << "      " << tap_loop(t) << "\n";
      if (whole > 0) {
        o << "      for (int64_t kk = kb; kk < kend; kk += 32) {\n";
        step("kk", false);
        o << "      }\n";
      }
      if (whole < t.k) {
        o << "      if (kend == " << whole << ") {\n"
          << "      for (int64_t x = 0; x < " << r * rows << "; ++x)\n"
          << "        memcpy(tail + x * 32, " << a << " + (" << ti << " * " << rows << " + x) * "
          << lda << " + " << whole << ", " << 2 * (t.k - whole) << ");\n";
        step(std::to_string(whole), true);
        o << "      }\n";
      }
      if (taps) o << "      }\n";
      for (int x = 0; x < r; ++x)
        for (int y = 0; y < q; ++y)
          o << "      _tile_stored(" << 2 * x + y << ", " << c_tile(x, y, ti, tj) << ");\n";
      o << "    }\n";
      return o.str();
    };

    // Parts of the reduction: [kb, kend) of its whole steps (one empty part where it has none).
    f << "  for (int64_t kb = 0; kb < " << std::max<int64_t>(whole, 1) << "; kb += " << kAmxDepth
      << ") {\n"
      << "  const int64_t kend = kb + " << kAmxDepth << " < " << whole << " ? kb + " << kAmxDepth
      << " : " << whole << ";\n  (void)kend;\n";
    // Pairs of row tiles, then the odd one; within each, pairs of column tiles, then the odd.
    f << in_groups(row_tiles, 2, "ti", [&](int64_t r, const std::string& ti) {
      return in_groups(column_tiles, 2, "tj", [&](int64_t q, const std::string& tj) {
        return tile_block(static_cast<int>(r), static_cast<int>(q), ti, tj);
      });
    });
    f << "  }\n}\n\n";
    return f.str();
  }

  void emit_for(std::ostream& os, const Stmt& s, int depth, bool in_parallel) {
    const std::string v = var_name(s->var_id);
    if (s->loop_kind == ir::LoopKind::Parallel && !in_parallel && s->extent > 1) {
      emit_parallel(os, s, depth);
      return;
    }
    if (s->loop_kind == ir::LoopKind::Vectorized && emit_vectorized(os, s, depth)) return;
    if (s->loop_kind != ir::LoopKind::Parallel && emit_vector_reduction(os, s, depth)) return;
    if (s->extent == 1) {
      // A loop of one iteration (a tile level of size 1) is its body at 0: no loop for the C
      // compiler to see through before it keeps a tile in registers.
      os << indent(depth) << "{\n";
      if (stmt_uses_var(s->body[0], s->var_id))
        os << indent(depth + 1) << "const int64_t " << v << " = 0;\n";
      emit(os, s->body[0], depth + 1, in_parallel || s->loop_kind == ir::LoopKind::Parallel);
      os << indent(depth) << "}\n";
      return;
    }
    const bool within = s->extent * written_size(s->body[0]) <= kMaxWrittenOut;
    if (within && written_out(*s)) {
      // Written out copy by copy with the variable a constant, so that the indices of a
      // small local tile become constants and the C compiler keeps the tile in registers.
      for (int64_t k = 0; k < s->extent; ++k) {
        os << indent(depth) << "{\n"
           << indent(depth + 1) << "const int64_t " << v << " = " << k << ";\n";
        emit(os, s->body[0], depth + 1, in_parallel);
        os << indent(depth) << "}\n";
      }
      return;
    }
    if (s->loop_kind == ir::LoopKind::Unrolled && within)
      os << indent(depth) << "#pragma GCC unroll " << s->extent << "\n";
    os << indent(depth) << "for (int64_t " << v << " = 0; " << v << " < " << int_literal(s->extent)
       << "; ++" << v << ") {\n";
    emit(os, s->body[0], depth + 1, in_parallel || s->loop_kind == ir::LoopKind::Parallel);
    os << indent(depth) << "}\n";
  }

  // A loop whose body only folds a value into one element, acc = acc op f(v), op a float
  // sum, max or min, and whose f reads memory contiguously along v (a softmax's sum of
  // exponentials, a layer normalisation's sums, a dot product): the schedule left it
  // serial, so it would run one element at a time through a chain of dependent operations.
  // Written with a vector accumulator, combined across lanes at the end, then a scalar
  // tail. The sum is then associated differently, as a blocked sum: no less accurate.
  bool emit_vector_reduction(std::ostream& os, const Stmt& s, int depth) {
    const int lanes = target_.vector_lanes(4);
    // Two vectors at least: below that the lanes' final combination costs what it saves.
    if (target_.isa == ir::Isa::Generic || s->extent < int64_t{2} * lanes) return false;
    // Through loops of one iteration (tile levels of size 1), their variables 0.
    Stmt st = s->body[0];
    std::vector<std::pair<int, Expr>> at_zero;
    for (; st->kind == StmtKind::For && st->extent == 1; st = st->body[0])
      at_zero.emplace_back(st->var_id, ir::make_int(0));
    if (st->kind != StmtKind::Store) return false;
    const Expr index = ir::substitute(st->index, at_zero);
    const Expr value = ir::substitute(st->value, at_zero);
    if (ir::uses_var(index, s->var_id) ||
        p_.buffers[static_cast<size_t>(st->buffer)].dtype != ir::DType::Float32)
      return false;
    if (value->kind != ExprKind::Binary || value->dtype != ir::DType::Float32) return false;
    const BinaryOp op = value->binary_op;
    if (op != BinaryOp::Add && op != BinaryOp::Max && op != BinaryOp::Min) return false;
    const Expr& acc = value->args[0];
    const Expr& f = value->args[1];
    if (acc->kind != ExprKind::Load || acc->var_id != st->buffer ||
        !ir::expr_equal(acc->args[0], index) || !ir::uses_var(f, s->var_id))
      return false;
    bool contiguous = true;
    ir::visit_expr(f, [&](const ir::ExprNode& n) {
      if (n.kind != ExprKind::Load) return;
      const auto c = ir::linear_coefficient(n.args[0], s->var_id);
      const bool float_load = n.dtype == ir::DType::Float32 || n.dtype == ir::DType::BFloat16;
      if (n.var_id == st->buffer || !float_load || !c || (*c != 0 && *c != 1)) contiguous = false;
    });
    if (!contiguous) return false;
    const Vectorizer vz(s->var_id, lanes);
    const std::string v = var_name(s->var_id), a = "acc" + v;
    const std::string identity = op == BinaryOp::Add   ? "0.0f"
                                 : op == BinaryOp::Max ? "(-INFINITY)"
                                                       : "INFINITY";
    auto fold = [&](const std::string& x, const std::string& y, bool vector) {
      if (op == BinaryOp::Add) return "(" + x + " + " + y + ")";
      const std::string fn = op == BinaryOp::Max ? "max" : "min";
      return vector ? vz.w(("tlmc_v" + fn).c_str()) + "(" + x + ", " + y + ")"
                    : "tlmc_f" + fn + "f(" + x + ", " + y + ")";
    };
    const int64_t main = s->extent / lanes * lanes;
    // Up to four accumulators, so that the vector operations of consecutive steps do not
    // wait for each other (a sum's additions take several cycles each); then they and the
    // lanes are combined pairwise, a tree of log2(lanes) steps instead of a chain.
    const int64_t vectors = main / lanes;
    const int accs = vectors >= 8 ? 4 : vectors >= 4 ? 2 : 1;
    const int64_t main_all = vectors / accs * accs * lanes;
    auto acc_name = [&](int k) { return a + (k ? "_" + std::to_string(k) : std::string()); };
    auto at = [&](int64_t offset) {
      if (!offset) return vz.as_vector(vz.vec(f));
      return vz.as_vector(
          vz.vec(ir::substitute(f, {{s->var_id, ir::make_var(s->var_id, v) + offset}})));
    };
    const std::string target = buf_name(st->buffer) + "[" + scalar_c(index) + "]";
    os << indent(depth) << "{\n";
    for (int k = 0; k < accs; ++k)
      os << indent(depth + 1) << vz.w("tlmc_vf") << " " << acc_name(k) << " = "
         << vz.w("tlmc_vsplat") << "(" << identity << ");\n";
    os << indent(depth + 1) << "for (int64_t " << v << " = 0; " << v << " < "
       << int_literal(main_all) << "; " << v << " += " << lanes * accs << ") {\n";
    for (int k = 0; k < accs; ++k)
      os << indent(depth + 2) << acc_name(k) << " = "
         << fold(acc_name(k), at(int64_t{k} * lanes), true) << ";\n";
    os << indent(depth + 1) << "}\n";
    if (main_all < main)
      os << indent(depth + 1) << "for (int64_t " << v << " = " << int_literal(main_all) << "; " << v
         << " < " << int_literal(main) << "; " << v << " += " << lanes << ") " << a << " = "
         << fold(a, at(0), true) << ";\n";
    for (int width = accs / 2; width > 0; width /= 2)
      for (int k = 0; k < width; ++k)
        os << indent(depth + 1) << acc_name(k) << " = "
           << fold(acc_name(k), acc_name(k + width), true) << ";\n";
    os << indent(depth + 1) << "for (int w = " << lanes / 2 << "; w > 0; w /= 2)\n"
       << indent(depth + 2) << "for (int k = 0; k < w; ++k) " << a
       << "[k] = " << fold(a + "[k]", a + "[k + w]", false) << ";\n"
       << indent(depth + 1) << target << " = " << fold(target, a + "[0]", false) << ";\n";
    if (main < s->extent)
      os << indent(depth + 1) << "for (int64_t " << v << " = " << int_literal(main) << "; " << v
         << " < " << int_literal(s->extent) << "; ++" << v << ") " << target << " = "
         << fold(target, scalar_c(f), false) << ";\n";
    os << indent(depth) << "}\n";
    return true;
  }

  // Whether loop `s` is of a kind written out copy by copy, its variable a constant in each
  // (within kMaxWrittenOut).
  bool written_out(const ir::StmtNode& s) const {
    return (s.loop_kind == ir::LoopKind::Unrolled && s.extent <= kMaxExplicitUnroll) ||
           (s.loop_kind == ir::LoopKind::Serial && s.extent <= kMaxTileRowUnroll &&
            !has_scalar_loop(s.body[0]) && reads_local_along(s.body[0], s.var_id));
  }

  // The statements `s` becomes with its loops written out where emit_for writes them out.
  int64_t written_size(const Stmt& s) const {
    switch (s->kind) {
      case StmtKind::For: {
        const int64_t body = written_size(s->body[0]);
        return s->extent > 1 && written_out(*s) && s->extent * body <= kMaxWrittenOut
                   ? s->extent * body
                   : body;
      }
      case StmtKind::Seq: {
        int64_t n = 0;
        for (const Stmt& c : s->body) n += written_size(c);
        return n;
      }
      case StmtKind::Allocate:
      case StmtKind::If:
        return written_size(s->body[0]);
      default:
        return 1;
    }
  }

  // Does `s` load a local buffer (a register tile) at an index that moves with `var`? A loop
  // over the rows of an accumulator tile, in the epilogue after a product, is then written
  // out copy by copy: with a long epilogue (an erf-form GELU) the C compiler would keep the
  // loop, index the tile by a variable, and so keep the whole tile in memory during the
  // product too (a fused GELU cost 8 times its own time as a kernel of its own).
  bool reads_local_along(const Stmt& s, int var) const {
    bool found = false;
    auto look = [&](const Expr& e) {
      if (!e) return;
      ir::visit_expr(e, [&](const ir::ExprNode& n) {
        if (n.kind == ExprKind::Load &&
            p_.buffers[static_cast<size_t>(n.var_id)].scope == ir::BufferScope::Local &&
            ir::uses_var(n.args[0], var))
          found = true;
      });
    };
    look(s->index);
    look(s->value);
    look(s->cond);
    for (const Stmt& b : s->body)
      if (!found) found = reads_local_along(b, var);
    return found;
  }

  // Does `s` hold a loop of more than one iteration that is not vectorized? Only loops whose
  // body is straight-line code (or vectors) are written out for a tile's rows, so that
  // nested small loops never multiply into thousands of copies.
  static bool has_scalar_loop(const Stmt& s) {
    if (s->kind == StmtKind::For && s->extent > 1 && s->loop_kind != ir::LoopKind::Vectorized)
      return true;
    for (const Stmt& b : s->body)
      if (has_scalar_loop(b)) return true;
    return false;
  }

  // Stores of the loop body, when every one can be written for whole vectors.
  bool vector_stores(const Stmt& body, std::vector<Stmt>& stores) const {
    if (body->kind == StmtKind::Store) {
      stores.push_back(body);
      return true;
    }
    if (body->kind != StmtKind::Seq) return false;
    for (const Stmt& c : body->body)
      if (!vector_stores(c, stores)) return false;
    return true;
  }

  // The float32 value a vectorised store writes: its value into a float32 buffer, the value
  // rounded by a Cast into a bfloat16 one; nullopt for other stores.
  std::optional<Expr> vector_value(const ir::StmtNode& st) const {
    const ir::DType t = p_.buffers[static_cast<size_t>(st.buffer)].dtype;
    if (t == ir::DType::Float32) return st.value;
    if (t == ir::DType::BFloat16 && st.value->kind == ExprKind::Cast &&
        st.value->args[0]->dtype == ir::DType::Float32)
      return st.value->args[0];
    // A bfloat16 value copied (a padded input of a window): widened, which is exact, and
    // rounded back, which gives the same bits but for a signalling NaN's, made quiet.
    if (t == ir::DType::BFloat16 && st.value->dtype == ir::DType::BFloat16 &&
        (st.value->kind == ExprKind::Load || st.value->kind == ExprKind::Select))
      return ir::make_cast(ir::DType::Float32, st.value);
    return std::nullopt;
  }

  bool emit_vectorized(std::ostream& os, const Stmt& s, int depth) {
    const int lanes = target_.vector_lanes(4);
    if (target_.isa == ir::Isa::Generic || s->extent < kMinVectorLanes) return false;
    std::vector<Stmt> stores;
    if (!vector_stores(s->body[0], stores)) return false;
    for (const Stmt& st : stores) {
      const auto c = ir::linear_coefficient(st->index, s->var_id);
      if (!c || *c != 1 || !vector_value(*st)) return false;
      bool floats_only = true;  // bfloat16 loads are read through a Cast to float32
      ir::visit_expr(st->value, [&](const ir::ExprNode& n) {
        if (n.kind == ExprKind::Load && n.dtype != ir::DType::Float32 &&
            n.dtype != ir::DType::BFloat16)
          floats_only = false;
      });
      if (!floats_only) return false;
    }
    const std::string v = var_name(s->var_id);
    // The body for vectors of `width` lanes at the loop's current value.
    auto vector_body = [&](int width) {
      Vectorizer vz(s->var_id, width);
      std::ostringstream b;
      for (const Stmt& st : stores) {
        const bool bf16 = p_.buffers[static_cast<size_t>(st->buffer)].dtype == ir::DType::BFloat16;
        b << indent(depth + 1) << vz.w(bf16 ? "tlmc_vstorebf16_" : "tlmc_vstore") << "(&"
          << buf_name(st->buffer) << "[" << scalar_c(st->index) << "], "
          << vz.as_vector(vz.vec(*vector_value(*st))) << ");\n";
      }
      return b.str();
    };
    auto chunk = [&](int64_t at, int width) {
      os << indent(depth) << "{\n"
         << indent(depth + 1) << "const int64_t " << v << " = " << at << ";\n"
         << vector_body(width) << indent(depth) << "}\n";
    };
    const int64_t main = s->extent / lanes * lanes;
    if (main / lanes <= kMaxExplicitVectorChunks) {
      // A few vectors: each chunk written out with a constant offset (see emit_for).
      for (int64_t c = 0; c < main; c += lanes) chunk(c, lanes);
    } else {
      os << indent(depth) << "for (int64_t " << v << " = 0; " << v << " < " << int_literal(main)
         << "; " << v << " += " << lanes << ") {\n"
         << vector_body(lanes) << indent(depth) << "}\n";
    }
    // The remainder in narrower vectors (8 lanes, then 4: the tail of a 56-wide row on a
    // 16-lane target is one 8-lane vector), then element by element.
    int64_t done = main;
    for (int width = lanes / 2; width >= kMinVectorLanes; width /= 2) {
      if (s->extent - done < width) continue;
      chunk(done, width);
      done += width;
    }
    if (done == s->extent) return true;
    os << indent(depth) << "for (int64_t " << v << " = " << int_literal(done) << "; " << v << " < "
       << int_literal(s->extent) << "; ++" << v << ") {\n";
    emit(os, s->body[0], depth + 1, true);
    os << indent(depth) << "}\n";
    return true;
  }

  // Free buffers and variables of a statement: what an outlined body must receive.
  void free_uses(const Stmt& s, std::set<int>& bufs, std::set<int>& vars, std::set<int>& bound_vars,
                 std::set<int>& local_bufs) const {
    auto expr_uses = [&](const Expr& e) {
      ir::visit_expr(e, [&](const ir::ExprNode& n) {
        if (n.kind == ExprKind::Var && !bound_vars.count(n.var_id)) vars.insert(n.var_id);
        if (n.kind == ExprKind::Load && !local_bufs.count(n.var_id)) bufs.insert(n.var_id);
      });
    };
    switch (s->kind) {
      case StmtKind::Seq:
        for (const Stmt& c : s->body) free_uses(c, bufs, vars, bound_vars, local_bufs);
        return;
      case StmtKind::Store:
        if (!local_bufs.count(s->buffer)) bufs.insert(s->buffer);
        expr_uses(s->index);
        expr_uses(s->value);
        return;
      case StmtKind::Allocate:
        local_bufs.insert(s->buffer);
        free_uses(s->body[0], bufs, vars, bound_vars, local_bufs);
        return;
      case StmtKind::If:
        expr_uses(s->cond);
        free_uses(s->body[0], bufs, vars, bound_vars, local_bufs);
        return;
      case StmtKind::Barrier:
        return;
      case StmtKind::TileProduct:
        for (int b : {s->buffer, s->tile->a, s->tile->b})
          if (!local_bufs.count(b)) bufs.insert(b);
        for (const Expr& e : ir::stmt_exprs(*s)) expr_uses(e);
        return;
      case StmtKind::For:
        bound_vars.insert(s->var_id);
        free_uses(s->body[0], bufs, vars, bound_vars, local_bufs);
        return;
    }
  }

  std::string field_type(int b) const {
    const ir::Buffer& buf = p_.buffers[static_cast<size_t>(b)];
    return std::string(is_input(b) ? "const " : "") + std::string(ir::dtype_c_type(buf.dtype)) +
           "*";
  }

  void emit_parallel(std::ostream& os, const Stmt& s, int depth) {
    std::set<int> bufs, vars, bound = {s->var_id}, locals;
    free_uses(s->body[0], bufs, vars, bound, locals);
    const std::string fn = p_.name + "_par" + std::to_string(outlined_++);
    std::ostringstream h;
    h << "struct " << fn << "_ctx {\n";
    for (int b : bufs) h << "  " << field_type(b) << " " << buf_name(b) << ";\n";
    for (int v : vars) h << "  int64_t " << var_name(v) << ";\n";
    if (bufs.empty() && vars.empty()) h << "  int unused;\n";
    h << "};\n\nstatic void " << fn << "(void* ctx_, int64_t begin, int64_t end) {\n";
    h << "  const struct " << fn << "_ctx* ctx = (const struct " << fn << "_ctx*)ctx_;\n";
    if (bufs.empty() && vars.empty()) h << "  (void)ctx;\n";
    for (int b : bufs)
      h << "  " << field_type(b) << " restrict " << buf_name(b) << " = ctx->" << buf_name(b)
        << ";\n";
    for (int v : vars) h << "  const int64_t " << var_name(v) << " = ctx->" << var_name(v) << ";\n";
    const std::string v = var_name(s->var_id);
    h << "  for (int64_t " << v << " = begin; " << v << " < end; ++" << v << ") {\n";
    std::ostringstream inner;
    emit(inner, s->body[0], 2, true);
    h << inner.str() << "  }\n}\n\n";
    helpers_ << h.str();
    os << indent(depth) << "{\n" << indent(depth + 1) << "struct " << fn << "_ctx ctx = {";
    bool first = true;
    for (int b : bufs) {
      os << (first ? "" : ", ") << buf_name(b);
      first = false;
    }
    for (int vv : vars) {
      os << (first ? "" : ", ") << var_name(vv);
      first = false;
    }
    if (first) os << "0";
    os << "};\n"
       << indent(depth + 1) << rt_ << "parallel_for(" << int_literal(s->extent) << ", " << fn
       << ", &ctx);\n"
       << indent(depth) << "}\n";
  }

  const ir::LoopProgram& p_;
  const ir::Target& target_;
  std::string rt_;
  std::ostringstream helpers_;
  int outlined_ = 0;
  int tiles_ = 0;
};

}  // namespace

KernelSource emit_kernel(const ir::LoopProgram& p, const ir::Target& target,
                         const std::string& rt) {
  return KernelEmitter(p, target, rt).run();
}

// Unary operations applied lane by lane, each lane one instruction: (name in the IR,
// scalar C function). The transcendental ones are math_functions.h's.
const char* const kLaneFunctions[][2] = {{"abs", "fabsf"}, {"floor", "floorf"}};

bool uses_tile_products(const ir::LoopProgram& p) {
  std::function<bool(const Stmt&)> walk = [&](const Stmt& s) {
    if (s->kind == StmtKind::TileProduct) return true;
    return std::any_of(s->body.begin(), s->body.end(), walk);
  };
  return walk(p.body);
}

std::string bf16_unusable(const ir::Target& target, const std::string& rt) {
  return rt + "bf16_ready(" + (target.bf16 == ir::Bf16Unit::Amx ? "2" : "1") + ") != 0";
}

bool uses_half_floats(const ir::LoopProgram& p) {
  return std::any_of(p.buffers.begin(), p.buffers.end(),
                     [](const ir::Buffer& b) { return ir::dtype_is_half(b.dtype); });
}

namespace {

// Vectors of bfloat16 loaded as float32 (the 16 bits become a float's high half) and float32
// vectors stored as bfloat16, rounded to nearest even as tlmc_f32_to_bf16 rounds (a NaN
// stays a quiet NaN): unsigned integer arithmetic, the lanes narrowed by the compiler.
std::string bf16_vector_helpers(int lanes) {
  const std::string L = std::to_string(lanes), vf = "tlmc_vf" + L, vu = "tlmc_vu" + L,
                    vh = "tlmc_vh" + L;
  std::ostringstream os;
  os << "typedef uint32_t " << vu << " __attribute__((vector_size(" << lanes * 4 << ")));\n";
  os << "typedef uint16_t " << vh << " __attribute__((vector_size(" << lanes * 2 << ")));\n";
  os << "TLMC_HELPER " << vf << " tlmc_vloadbf16_" << L << "(const uint16_t* p) {\n"
     << "  " << vh << " h;\n  " << vu << " x;\n  " << vf << " r;\n"
     << "  memcpy(&h, p, sizeof h);\n"
     << "  x = __builtin_convertvector(h, " << vu << ") << 16;\n"
     << "  memcpy(&r, &x, sizeof r);\n  return r;\n}\n";
  os << "TLMC_HELPER void tlmc_vstorebf16_" << L << "(uint16_t* p, " << vf << " v) {\n"
     << "  " << vu << " x, nan, r;\n  " << vh << " h;\n"
     << "  memcpy(&x, &v, sizeof x);\n"
     << "  nan = (" << vu << ")((x & 0x7fffffffu) > 0x7f800000u);\n"
     << "  r = (((x + 0x7fffu + ((x >> 16) & 1u)) >> 16) & ~nan) | (((x >> 16) | 0x40u) & nan);\n"
     << "  h = __builtin_convertvector(r, " << vh << ");\n"
     << "  memcpy(p, &h, sizeof h);\n}\n";
  return os.str();
}

}  // namespace

std::string kernel_preamble(const ir::Target& target, bool half_floats, bool tile_products) {
  std::ostringstream os;
  // Helpers are marked unused: a kernel set uses only some of them (clang warns otherwise).
  os << "#define TLMC_HELPER static inline __attribute__((unused))\n" << scalar_helpers(true);
  // AMX's tile configuration (palette 1): bytes per row and rows of tiles 0-15.
  if (tile_products)
    os << "#include <immintrin.h>\n"
       << "struct __attribute__((aligned(64))) tlmc_tile_config {\n"
       << "  uint8_t palette, start_row, reserved[14];\n  uint16_t colsb[16];\n"
       << "  uint8_t rows[16];\n};\n";
  if (half_floats) os << half_float_helpers();
  os << math_functions(1);
  if (target.isa == ir::Isa::Generic) return os.str();
  // pow computes in vectors of doubles twice the width of the target's floats: GCC warns
  // that passing them to the (static, inlined) helpers would change an ABI none of them
  // has.
  os << "#if defined(__GNUC__) && !defined(__clang__)\n"
     << "#pragma GCC diagnostic ignored \"-Wpsabi\"\n"
     << "#endif\n";
  // One vector type and helper set per width, from the target's down to 4 lanes.
  for (int lanes = target.vector_lanes(4); lanes >= kMinVectorLanes; lanes /= 2) {
    const std::string L = std::to_string(lanes), vf = "tlmc_vf" + L, vi = "tlmc_vi" + L;
    os << "typedef float " << vf << " __attribute__((vector_size(" << lanes * 4 << ")));\n";
    os << "typedef int32_t " << vi << " __attribute__((vector_size(" << lanes * 4 << ")));\n";
    os << "TLMC_HELPER " << vf << " tlmc_vload" << L << "(const float* p) { " << vf
       << " r; memcpy(&r, p, sizeof r); return r; }\n";
    os << "TLMC_HELPER void tlmc_vstore" << L << "(float* p, " << vf
       << " v) { memcpy(p, &v, sizeof v); }\n";
    // A braced list of x (not {0} + x, which costs an add: 0 + -0 is +0).
    os << "TLMC_HELPER " << vf << " tlmc_vsplat" << L << "(float x) { return (" << vf << "){";
    for (int i = 0; i < lanes; ++i) os << (i ? ", x" : "x");
    os << "}; }\n";
    os << "TLMC_HELPER " << vf << " tlmc_vselect" << L << "(" << vi << " m, " << vf << " a, " << vf
       << " b) {\n  return (" << vf << ")((m & (" << vi << ")a) | (~m & (" << vi << ")b));\n}\n";
    os << "TLMC_HELPER " << vf << " tlmc_vmin" << L << "(" << vf << " a, " << vf
       << " b) { return tlmc_vselect" << L << "(b < a, b, a); }\n";
    os << "TLMC_HELPER " << vf << " tlmc_vmax" << L << "(" << vf << " a, " << vf
       << " b) { return tlmc_vselect" << L << "(b > a, b, a); }\n";
    // Lane-by-lane math functions, for the operations without a vector instruction.
    for (const auto& f : kLaneFunctions)
      os << "TLMC_HELPER " << vf << " tlmc_v" << f[0] << L << "(" << vf << " x) {\n  " << vf
         << " r;\n  for (int i = 0; i < " << lanes << "; ++i) r[i] = " << f[1]
         << "(x[i]);\n  return r;\n}\n";
    os << math_functions(lanes);
    if (half_floats) os << bf16_vector_helpers(lanes);
  }
  return os.str();
}

}  // namespace tlmc::codegen
