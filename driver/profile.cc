#include "driver/profile.h"

#include <algorithm>
#include <cstdio>
#include <ostream>
#include <utility>

#include "driver/cuda_kernel_check.h"
#include "driver/temp_folder.h"
#include "reference/random_inputs.h"
#include "toolchain/isolated_run.h"
#include "toolchain/timing_lock.h"

namespace tlmc::driver {
namespace {

constexpr int kMinRuns = 10;
constexpr int kTimeoutSeconds = 600;
constexpr size_t kNodesWidth = 60;  // characters of the nodes column

// Bytes of a kernel's parameters, read and written.
double parameter_bytes(const ir::LoopProgram& k) {
  double bytes = 0;
  for (int id : k.params) {
    const ir::Buffer& b = k.buffers.at(static_cast<size_t>(id));
    bytes += static_cast<double>(b.size) * static_cast<double>(ir::dtype_size(b.dtype));
  }
  return bytes;
}

}  // namespace

ModelProfile profile_model(const CompiledModel& model, const ir::Target& target, CCompiler cc,
                           double min_seconds, bool copies) {
  const ir::Graph& g = model.graph;
  std::vector<std::vector<uint8_t>> inputs;
  for (reference::HostTensor& t : reference::random_graph_inputs(g, 1))
    inputs.push_back(std::move(t.bytes));
  std::vector<size_t> out_bytes;
  for (int t : g.outputs) out_bytes.push_back(g.type(t).bytes());

  const TempFolder dir("tlmc-profile");
  const std::string so = build_shared_library(model, dir.path(), target, cc);
  const int calls = static_cast<int>(model.plan.calls.size());
  std::vector<double> bytes;
  std::vector<size_t> copy_bytes;
  for (const codegen::Call& call : model.plan.calls) {
    bytes.push_back(parameter_bytes(model.plan.kernels.at(static_cast<size_t>(call.kernel)).loops));
    if (copies) copy_bytes.push_back(static_cast<size_t>(bytes.back() / 2));
  }
  if (target.is_cuda()) copy_bytes.clear();  // the yardstick copies host memory
  const toolchain::IsolatedRun run = [&] {
    const toolchain::TimingLock lock;  // one tlmc times at a time on this machine
    return toolchain::run_isolated(so, hosted_entry(model, target), inputs, out_bytes,
                                   kTimeoutSeconds, kMinRuns, min_seconds, calls, copy_bytes);
  }();
  if (run.status != toolchain::IsolatedRun::Ok)
    throw InternalError("the generated library " + run.message +
                        " on random inputs; this is a bug in tlmc");
  ModelProfile p;
  p.runs = run.timing_runs;
  p.run_seconds = run.median_seconds;
  if (target.is_cuda()) {
    p.ran_on = target.gpu.device;
    p.run_seconds = 0;
    for (double s : run.call_seconds) p.run_seconds += s;
  }
  std::vector<scheduler::GpuEstimate> estimates;
  if (target.is_cuda()) estimates = estimate_cuda_kernels(target, model);
  for (int c = 0; c < calls; ++c) {
    const codegen::Call& call = model.plan.calls[static_cast<size_t>(c)];
    const codegen::KernelInfo& k = model.plan.kernels.at(static_cast<size_t>(call.kernel));
    const size_t i = static_cast<size_t>(c);
    p.calls.push_back(CallProfile{c, call.kernel, call.comment, k.workload_key,
                                  run.call_seconds.at(i), k.flops, bytes[i],
                                  copy_bytes.empty() ? 0.0 : run.copy_seconds.at(i)});
    if (!estimates.empty())
      p.calls.back().estimate_seconds = estimates.at(static_cast<size_t>(call.kernel)).seconds;
  }
  return p;
}

void print_profile(std::ostream& os, const ModelProfile& p) {
  std::vector<const CallProfile*> order;
  double sum = 0, estimated = 0;
  for (const CallProfile& c : p.calls) {
    order.push_back(&c);
    sum += c.seconds;
    estimated += c.estimate_seconds;
  }
  std::stable_sort(order.begin(), order.end(), [](const CallProfile* a, const CallProfile* b) {
    return a->seconds > b->seconds;
  });
  // On a GPU the last number column is the analytic model's estimate; on a CPU, the copy's.
  const bool gpu = !p.ran_on.empty();
  char line[400];
  std::snprintf(line, sizeof line, "%5s %6s  %-16s %10s %6s %8s %7s %7s  %s\n", "call", "kernel",
                "workload", "us", "share", "GFLOP/s", "GB/s", gpu ? "est us" : "x copy", "nodes");
  os << line;
  for (const CallProfile* c : order) {
    std::string nodes = c->nodes;
    if (nodes.size() > kNodesWidth) nodes = nodes.substr(0, kNodesWidth - 3) + "...";
    const double share = p.run_seconds > 0 ? 100 * c->seconds / p.run_seconds : 0;
    const double gflops = c->seconds > 0 ? c->flops / c->seconds * 1e-9 : 0;
    const double gbytes = c->seconds > 0 ? c->bytes / c->seconds * 1e-9 : 0;
    const double copies = c->copy_seconds > 0 ? c->seconds / c->copy_seconds : 0;
    std::snprintf(line, sizeof line, "%5d %6d  %-16s %10.2f %5.1f%% %8.1f %7.1f %7.2f  %s\n",
                  c->call, c->kernel, c->workload_key.c_str(), c->seconds * 1e6, share, gflops,
                  gbytes, gpu ? c->estimate_seconds * 1e6 : copies, nodes.c_str());
    os << line;
  }
  if (gpu)
    std::snprintf(line, sizeof line,
                  "one run on the GPU (%s): the calls' medians add up to %.2f us (CUDA events "
                  "between calls, %d runs); the analytic model estimated %.2f us\n",
                  p.ran_on.c_str(), sum * 1e6, p.runs, estimated * 1e6);
  else
    std::snprintf(line, sizeof line,
                  "one run: %.2f us (median of %d runs); the calls' medians add up to %.2f us\n",
                  p.run_seconds * 1e6, p.runs, sum * 1e6);
  os << line;
}

}  // namespace tlmc::driver
