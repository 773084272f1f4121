#include "driver/check.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iomanip>
#include <ostream>
#include <random>
#include <sstream>

#include "driver/temp_folder.h"
#include "frontend/reduced_precision.h"
#include "ir/graph_verify.h"
#include "reference/interpreter.h"
#include "reference/random_inputs.h"
#include "toolchain/isolated_run.h"

namespace tlmc::driver {
namespace {

// Element i of dense data of dtype t, as a double (exact for all but huge int64 values).
double element(ir::DType t, const uint8_t* data, int64_t i) {
  const uint8_t* p = data + static_cast<size_t>(i) * ir::dtype_size(t);
  auto read = [&](auto v) {
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  switch (t) {
    case ir::DType::Float32:
      return read(float{});
    case ir::DType::Float64:
      return read(double{});
    case ir::DType::Int32:
      return read(int32_t{});
    case ir::DType::Int64:
      return read(int64_t{});
    case ir::DType::Int8:
      return read(int8_t{});
    case ir::DType::UInt8:
    case ir::DType::Bool:
      return read(uint8_t{});
    case ir::DType::Float16:
    case ir::DType::BFloat16:
      return ir::sixteen_bit_to_float(t, static_cast<uint16_t>(read(uint16_t{})));
  }
  return 0;
}

// The bfloat16 model `g` with every float32 value that it rounds to bfloat16 first
// multiplied by 1 + u, u uniform in [-kNudge, kNudge] for each element (kNudge in check.h).
ir::Graph nudge_roundings(const ir::Graph& g, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-kNudge, kNudge);
  ir::Graph out = g;
  out.nodes.clear();
  for (const ir::Node& n : g.nodes) {
    if (n.op != "Cast" || g.type(n.outputs[0]).dtype != ir::DType::BFloat16 ||
        g.type(n.inputs[0]).dtype != ir::DType::Float32) {
      out.nodes.push_back(n);
      continue;
    }
    const ir::TensorType& type = g.type(n.inputs[0]);
    ir::Tensor factor;
    factor.name = ir::unused_tensor_name(out, g.tensor(n.inputs[0]).name + ".nudge");
    factor.type = type;
    factor.kind = ir::TensorKind::Weight;
    factor.loc = n.loc;
    auto bytes = std::make_shared<std::vector<uint8_t>>(type.bytes());
    for (int64_t i = 0; i < type.numel(); ++i) {
      const auto f = static_cast<float>(1 + u(rng));
      std::memcpy(bytes->data() + 4 * i, &f, 4);
    }
    factor.data = bytes;
    ir::Tensor nudged = g.tensor(n.inputs[0]);
    nudged.name = ir::unused_tensor_name(out, nudged.name + ".nudged");
    nudged.kind = ir::TensorKind::Intermediate;
    nudged.data = nullptr;
    ir::Node mul;
    mul.name = nudged.name;
    mul.op = "Mul";
    mul.loc = n.loc;
    mul.inputs = {n.inputs[0], static_cast<int>(out.tensors.size())};
    out.tensors.push_back(factor);
    mul.outputs = {static_cast<int>(out.tensors.size())};
    out.tensors.push_back(nudged);
    out.nodes.push_back(mul);
    ir::Node cast = n;
    cast.inputs[0] = mul.outputs[0];
    out.nodes.push_back(cast);
  }
  return out;
}

std::string scientific(double x) {
  std::ostringstream os;
  os << std::setprecision(3) << std::scientific << x;
  return os.str();
}

// In the CPU emulator, blocks and threads run one at a time in an order a GPU does not
// promise: run once more with each launch's blocks and each block's threads in reverse,
// and the outputs must agree within the check's tolerance (the kernels use no atomics, so
// a kernel without a race computes them in the same order). Two blocks writing different
// values to one element, or a thread reading what another writes with no barrier between,
// show here.
void expect_same_in_reverse(const toolchain::IsolatedRun& forward, const std::string& so,
                            const CompiledModel& model, const ir::Target& target,
                            const std::vector<std::vector<uint8_t>>& inputs,
                            const std::vector<size_t>& out_bytes) {
  setenv("TLMC_EMULATION_ORDER", "reverse", 1);
  const toolchain::IsolatedRun reverse =
      toolchain::run_isolated(so, hosted_entry(model, target), inputs, out_bytes, 600);
  unsetenv("TLMC_EMULATION_ORDER");
  if (reverse.status != toolchain::IsolatedRun::Ok)
    throw InternalError("the generated library " + reverse.message +
                        " with its blocks and threads in reverse order, on random inputs; this "
                        "is a bug in tlmc");
  const ir::Graph& g = model.graph;
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    const ir::TensorType& type = g.type(g.outputs[o]);
    for (int64_t i = 0; i < type.numel(); ++i) {
      const double a = element(type.dtype, forward.outputs[o].data(), i);
      const double b = element(type.dtype, reverse.outputs[o].data(), i);
      if ((std::isnan(a) && std::isnan(b)) || a == b ||
          std::fabs(a - b) <= kCheckAtol + kCheckRtol * std::fabs(a))
        continue;
      std::ostringstream what;
      what << "the generated library's output " << g.tensor(g.outputs[o]).name << " element " << i
           << " is " << a << " with the emulator's blocks and threads in order and " << b
           << " in reverse: a race between them; this is a bug in tlmc";
      throw InternalError(what.str());
    }
  }
}

}  // namespace

CheckResult check_model(const CompiledModel& model, const ir::Target& target, uint64_t seed,
                        CCompiler cc, bool sanitize) {
  const ir::Graph& g = model.graph;
  const std::vector<reference::HostTensor> inputs = reference::random_graph_inputs(g, seed);
  std::vector<std::vector<uint8_t>> raw_inputs;
  for (const reference::HostTensor& t : inputs) raw_inputs.push_back(t.bytes);
  std::vector<size_t> out_bytes;
  for (int t : g.outputs) out_bytes.push_back(g.type(t).bytes());

  const TempFolder dir("tlmc-check");
  toolchain::IsolatedRun run;
  if (sanitize) {
    toolchain::SanitizedRun s =
        run_sanitized_library(model, dir.path(), target, raw_inputs, out_bytes, 1200);
    if (!s.ok)
      throw InternalError("the generated library " + s.message +
                          "\non random inputs; this is a bug in tlmc");
    run.outputs = std::move(s.outputs);
  } else {
    const std::string so = build_shared_library(model, dir.path(), target, cc);
    // A CUDA target's library runs on the GPU here, else in the CPU emulator, through its
    // NAME_hosted entry.
    run = toolchain::run_isolated(so, hosted_entry(model, target), raw_inputs, out_bytes, 600);
    if (run.status != toolchain::IsolatedRun::Ok)
      throw InternalError("the generated library " + run.message +
                          " on random inputs; this is a bug in tlmc");
    if (target.is_cuda() && !target.runs_here)
      expect_same_in_reverse(run, so, model, target, raw_inputs, out_bytes);
  }

  const std::vector<reference::HostTensor> want = reference::interpret(g, inputs);
  std::vector<reference::HostTensor> want_compiled;
  if (model.bf16) want_compiled = reference::interpret(model.bf16_graph, inputs);
  CheckResult result;
  result.sanitized = sanitize;
  result.bf16 = model.bf16;
  result.atol = model.bf16 ? kBf16CheckAtol : kCheckAtol;
  result.rtol = model.bf16 ? kBf16CheckRtol : kCheckRtol;
  const std::vector<int> in_series =
      model.bf16 ? frontend::bf16_products_in_series(model.bf16_graph) : std::vector<int>{};
  if (target.is_cuda())
    result.ran =
        target.runs_here ? "on the GPU (" + target.gpu.device + ")" : "in the CPU emulator";
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    OutputError e;
    e.name = g.tensor(g.outputs[o]).name;
    const ir::TensorType& type = g.type(g.outputs[o]);
    const int64_t n = type.numel();
    if (model.bf16) {
      double squares = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double ref = element(type.dtype, want[o].bytes.data(), i);
        if (std::isfinite(ref)) squares += ref * ref;
      }
      e.rms = n > 0 ? std::sqrt(squares / static_cast<double>(n)) : 0;
      e.products_in_series = in_series[o];
      const double roundings = std::sqrt(std::max(1.0, double(e.products_in_series)));
      for (int64_t i = 0; i < n; ++i) {
        const double got = element(type.dtype, run.outputs[o].data(), i);
        const double ref = element(type.dtype, want_compiled[o].bytes.data(), i);
        if ((std::isnan(got) && std::isnan(ref)) || got == ref) continue;
        const double abs = std::fabs(got - ref);
        const double bound =
            kCheckAtol + (kCheckRtol + roundings * kBf16Rounding) * std::max(std::fabs(ref), e.rms);
        // A non-finite difference (infinity against a finite value) is past any bound.
        if (!std::isfinite(abs) || !(abs <= bound))
          e.past_bound = std::max(e.past_bound, std::isfinite(abs) ? abs - bound : INFINITY);
        e.max_abs_compiled = std::isnan(abs) ? INFINITY : std::max(e.max_abs_compiled, abs);
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      const double got = element(type.dtype, run.outputs[o].data(), i);
      const double ref = element(type.dtype, want[o].bytes.data(), i);
      const bool both_nan = std::isnan(got) && std::isnan(ref);
      const bool same_inf = std::isinf(got) && std::isinf(ref) && (got > 0) == (ref > 0);
      e.both_nan += both_nan ? 1 : 0;
      if (both_nan || same_inf) continue;
      const double abs = std::fabs(got - ref);
      const double rel = abs / std::max(std::fabs(ref), 1e-6);
      // A 16-bit float result may lie one unit in the last place from the reference's: the
      // library rounds its float32 value, the reference its double one.
      if (!std::isfinite(abs) ||
          !(abs <= result.atol + (result.rtol + ir::half_last_place(type.dtype)) *
                                     std::max(std::fabs(ref), e.rms)))
        e.within_tolerance = false;
      if (std::isnan(abs)) {
        e.max_abs = e.max_rel = INFINITY;
        continue;
      }
      e.max_abs = std::max(e.max_abs, abs);
      e.max_rel = std::max(e.max_rel, rel);
    }
    e.elements = n;
    result.outputs.push_back(e);
  }
  // An error past its element's bound counts only past the distance between the bfloat16
  // model's reference and itself nudged, computed where it is needed (an interpretation
  // more of the whole model).
  const bool past = std::any_of(result.outputs.begin(), result.outputs.end(),
                                [](const OutputError& e) { return e.past_bound > 0; });
  if (past) {
    const std::vector<reference::HostTensor> nudged =
        reference::interpret(nudge_roundings(model.bf16_graph, seed), inputs);
    for (size_t o = 0; o < result.outputs.size(); ++o) {
      OutputError& e = result.outputs[o];
      const ir::DType t = g.type(g.outputs[o]).dtype;
      e.nudged = 0;
      for (int64_t i = 0; i < e.elements; ++i) {
        const double d =
            element(t, nudged[o].bytes.data(), i) - element(t, want_compiled[o].bytes.data(), i);
        if (std::isfinite(d)) e.nudged = std::max(e.nudged, std::fabs(d));
      }
      e.compiled_exactly = !(e.past_bound > kNudgedAllowance * e.nudged);
    }
  }
  for (const OutputError& e : result.outputs) {
    result.compiled_exactly = result.compiled_exactly && e.compiled_exactly;
    result.passed = result.passed && e.within_tolerance && e.compiled_exactly;
  }
  return result;
}

void print_check(std::ostream& os, const CheckResult& r) {
  for (const OutputError& e : r.outputs) {
    os << "output " << e.name << ": max abs error " << std::setprecision(3) << std::scientific
       << e.max_abs << ", max rel error " << e.max_rel;
    if (r.bf16)
      os << " against the float32 model (rms " << e.rms << "); " << e.max_abs_compiled
         << " against the bfloat16 model it compiles (" << e.products_in_series
         << " products in series"
         << (e.nudged >= 0 ? "; " + scientific(e.nudged) + " between it and itself nudged" : "")
         << ")" << (e.compiled_exactly ? "" : "  MISCOMPILED");
    os << (e.within_tolerance ? "  ok" : "  MISMATCH") << "\n";
    if (e.both_nan > 0)
      os << "  note: " << e.both_nan << " of " << e.elements << " elements of " << e.name
         << " are NaN in both, and compare nothing"
         << (e.both_nan == e.elements ? ": this check of it is vacuous (are the random inputs "
                                        "outside what the model expects?)"
                                      : "")
         << "\n";
  }
  if (!r.ran.empty()) os << "the CUDA kernels ran " << r.ran << "\n";
  if (r.sanitized)
    os << "the library ran built with -fsanitize=address,undefined, with no report\n";
  os << std::defaultfloat << (r.passed ? "check passed" : "check FAILED") << " (tolerance: abs "
     << r.atol << " + rel " << r.rtol;
  if (r.bf16)
    os << " of max(|want|, rms) against the float32 model, bfloat16's; abs " << kCheckAtol
       << " + rel " << kCheckRtol << " + sqrt(products in series) bfloat16 roundings ("
       << kBf16Rounding << " each) of max(|want|, rms), and " << kNudgedAllowance
       << " times the distance of the model nudged, against the bfloat16 model";
  os << ")\n";
  if (r.bf16 && r.compiled_exactly && !r.passed)
    os << "the bfloat16 products lose more than bfloat16's tolerance on this model: keep the "
          "most sensitive ones in float32 (--keep-fp32 NODE,...), or use --precision fp32\n";
}

}  // namespace tlmc::driver
