// The CUDA kernels tlmc emits, run: for one fused subgraph of each kind of operator, the
// -O0 point, each other sketch's default point and points drawn at random from the GPU
// sketches' spaces are lowered, emitted as
// CUDA C++, compiled by the host's C++ compiler against the CPU emulator
// (runtime/cuda_emulation) and run with threads and blocks in forward and in reverse order;
// every output must match the reference interpreter. NVRTC, where it is installed, builds
// every point's text for sm_80 and sm_90 without a warning and within the descriptors'
// limits, and the -O0 point without a spill.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <random>

#include "codegen/emit_cuda_kernel.h"
#include "frontend/fold_constants.h"
#include "frontend/yaml_reader.h"
#include "ir/lower.h"
#include "reference/interpreter.h"
#include "reference/random_inputs.h"
#include "scheduler/decision.h"
#include "scheduler/gpu_cost_model.h"
#include "scheduler/lower_schedule.h"
#include "scheduler/partition.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"
#include "support/test_support.h"
#include "tune/gpu_estimate_search.h"

namespace tlmc::test {
namespace {

struct Model {
  const char* name;
  const char* yaml;
};

const Model kModels[] = {
    {"gemm_bias_relu", R"(tlmc: 1
name: m
inputs:
  x: {shape: [6, 37]}
weights:
  w: {shape: [37, 20], init: {uniform: [-1, 1]}, seed: 3}
  b: {shape: [20], init: {uniform: [-1, 1]}, seed: 4}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: Add, inputs: [h, b], outputs: [hb]}
  - {op: Relu, inputs: [hb], outputs: [y]}
outputs: [y]
)"},
    {"conv_padded_strided", R"(tlmc: 1
name: m
inputs:
  x: {shape: [1, 3, 11, 9]}
weights:
  w: {shape: [5, 3, 3, 3], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: Conv, inputs: [x, w], outputs: [y], attrs: {pads: [1, 1, 1, 1], strides: [2, 1]}}
outputs: [y]
)"},
    {"softmax", R"(tlmc: 1
name: m
inputs:
  x: {shape: [3, 5, 19]}
nodes:
  - {op: Softmax, inputs: [x], outputs: [y], attrs: {axis: -1}}
outputs: [y]
)"},
    {"layer_normalization", R"(tlmc: 1
name: m
inputs:
  x: {shape: [4, 33]}
weights:
  g: {shape: [33], init: {uniform: [-1, 1]}, seed: 3}
  b: {shape: [33], init: {uniform: [-1, 1]}, seed: 4}
nodes:
  - {op: LayerNormalization, inputs: [x, g, b], outputs: [y], attrs: {axis: -1}}
outputs: [y]
)"},
    {"softmax_wide_rows", R"(tlmc: 1
name: m
inputs:
  x: {shape: [3, 200]}
nodes:
  - {op: Softmax, inputs: [x], outputs: [y], attrs: {axis: -1}}
outputs: [y]
)"},
    {"global_average_pool", R"(tlmc: 1
name: m
inputs:
  x: {shape: [2, 5, 9, 9]}
nodes:
  - {op: GlobalAveragePool, inputs: [x], outputs: [y]}
outputs: [y]
)"},
    {"reduce_mean_strided", R"(tlmc: 1
name: m
inputs:
  x: {shape: [3, 70, 5]}
nodes:
  - {op: ReduceMean, inputs: [x], outputs: [s], attrs: {axes: [1], keepdims: 0}}
  - {op: Neg, inputs: [s], outputs: [y]}
outputs: [y]
)"},
    {"max_pool", R"(tlmc: 1
name: m
inputs:
  x: {shape: [1, 4, 9, 9]}
nodes:
  - {op: MaxPool, inputs: [x], outputs: [y], attrs: {kernel_shape: [3, 3], pads: [1, 1, 1, 1], strides: [2, 2]}}
outputs: [y]
)"},
    {"reduce_mean_all", R"(tlmc: 1
name: m
inputs:
  x: {shape: [7, 13]}
nodes:
  - {op: ReduceMean, inputs: [x], outputs: [y], attrs: {keepdims: 0}}
outputs: [y]
)"},
    {"batched_matmul_odd", R"(tlmc: 1
name: m
inputs:
  a: {shape: [3, 13, 29]}
  b: {shape: [3, 29, 11]}
nodes:
  - {op: MatMul, inputs: [a, b], outputs: [y]}
outputs: [y]
)"},
    {"grouped_conv_dilated", R"(tlmc: 1
name: m
inputs:
  x: {shape: [2, 4, 9, 8]}
weights:
  w: {shape: [6, 2, 3, 2], init: {uniform: [-1, 1]}, seed: 3}
  b: {shape: [6], init: {uniform: [-1, 1]}, seed: 4}
nodes:
  - {op: Conv, inputs: [x, w, b], outputs: [c], attrs: {group: 2, dilations: [2, 1], pads: [2, 0, 1, 1]}}
  - {op: Sigmoid, inputs: [c], outputs: [y]}
outputs: [y]
)"},
    {"transpose_tanh", R"(tlmc: 1
name: m
inputs:
  x: {shape: [3, 17, 10]}
nodes:
  - {op: Transpose, inputs: [x], outputs: [t], attrs: {perm: [2, 0, 1]}}
  - {op: Tanh, inputs: [t], outputs: [y]}
outputs: [y]
)"},
    // Products of few rows, shared by threads along their reduction (cross_thread_product):
    // one row of a [N, K] weight with an epilogue, three rows of a [K, N] one.
    {"gemv_trans_b_sigmoid", R"(tlmc: 1
name: m
inputs:
  x: {shape: [1, 101]}
weights:
  w: {shape: [23, 101], init: {uniform: [-1, 1]}, seed: 3}
  b: {shape: [23], init: {uniform: [-1, 1]}, seed: 4}
nodes:
  - {op: Gemm, inputs: [x, w, b], outputs: [h], attrs: {transB: 1}}
  - {op: Sigmoid, inputs: [h], outputs: [y]}
outputs: [y]
)"},
    {"gemv_three_rows", R"(tlmc: 1
name: m
inputs:
  x: {shape: [3, 70]}
weights:
  w: {shape: [70, 19], init: {uniform: [-1, 1]}, seed: 5}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [y]}
outputs: [y]
)"},
};

const ir::GpuLimits kGpu = ir::parse_target("cuda-sm80")->gpu;

// The .cu of one kernel with a C entry point that launches it: what a test can dlopen.
std::string test_source(const codegen::CudaKernelSource& k, const ir::LoopProgram& p) {
  std::ostringstream os;
  os << "#include <cstdint>\n#include <cstring>\n#include \"tlmc_cuda.h\"\n\n"
     << codegen::cuda_kernel_preamble() << "\n"
     << k.text << "extern \"C\" int tlmc_test_run(void* const* buffers, char* scratch) {\n";
  for (const codegen::CudaLaunch& l : k.launches) {
    os << "  if (TLMC_LAUNCH(" << l.kernel << ", dim3(" << l.blocks << "), dim3(" << l.threads
       << "), " << l.dynamic_shared_bytes << ", nullptr";
    for (size_t i = 0; i < p.params.size(); ++i) {
      const ir::Buffer& b = p.buffers[static_cast<size_t>(p.params[i])];
      os << ", (" << (static_cast<int>(i) < p.num_inputs ? "const " : "")
         << ir::dtype_c_type(b.dtype) << "*)buffers[" << i << "]";
    }
    os << ", scratch) != cudaSuccess) return 1;\n";
  }
  os << "  return cudaDeviceSynchronize() != cudaSuccess;\n}\n";
  os << "#ifdef TLMC_CUDA_EMULATION\n"
     << "extern \"C\" const char* tlmc_test_message() { return tlmc_emulation_message(); }\n"
     << "extern \"C\" void tlmc_test_order(int reverse) { tlmc_emulation_reset(); "
        "tlmc_emulation_set_reverse(reverse != 0); }\n#endif\n";
  return os.str();
}

// Compiles the source with the emulator into a shared object; "" and `log` on failure.
std::string compile_emulated(const TempDir& dir, const std::string& source, std::string* log) {
  const std::string cu = dir.file("kernel.cc"), so = dir.file("kernel.so");
  write_file(cu, source);
  CommandResult r =
      run_command("c++ -std=c++17 -O1 -fPIC -shared -w -I" + std::string(TLMC_SOURCE_DIR) +
                  "/runtime/cuda_emulation -I" + std::string(TLMC_SOURCE_DIR) + "/runtime " + cu +
                  " -o " + so + " 2>&1");
  *log = r.out;
  return r.exit_code == 0 ? so : "";
}

// The kernels as NVRTC builds them for `target`'s SM, held against its limits (and, for the
// -O0 point, without a spill); false when NVRTC is not installed.
bool expect_builds(const ir::LoopProgram& p, const std::string& target, bool no_spills) {
  const ir::GpuLimits gpu = ir::parse_target(target)->gpu;
  const std::optional<tune::BuiltKernels> built = tune::build_kernels(p, gpu);
  if (!built) return false;
  EXPECT_FALSE(built->cubin.empty()) << "NVRTC gives the SASS a GPU would load";
  for (const ir::KernelResources& r : built->resources) {
    SCOPED_TRACE(target + " " + r.name);
    const std::vector<std::string> over = ir::limit_violations(gpu, r);
    EXPECT_TRUE(over.empty()) << (over.empty() ? "" : over[0]);
    if (no_spills) {
      EXPECT_EQ(r.spill_stores + r.spill_loads, 0);
    }
  }
  return true;
}

// One fused subgraph of a model, its inputs, and what the reference computes.
struct Subgraph {
  ir::Graph graph;
  ir::LoweredSubgraph lowered;
  scheduler::Sketches sketches;
  std::vector<const uint8_t*> sources;  // of each program input
  std::vector<reference::HostTensor> inputs, want;

  explicit Subgraph(const Model& m)
      : graph(frontend::fold_constants(
            frontend::read_yaml_text(m.yaml, std::string(m.name) + ".yaml"))) {
    const scheduler::Partition partition = scheduler::partition_graph(graph);
    EXPECT_EQ(partition.subgraphs.size(), 1u) << "each model is one fused subgraph";
    lowered = ir::lower_subgraph(graph, partition.subgraphs[0]);
    EXPECT_EQ(lowered.output_tensors, graph.outputs);
    sketches = scheduler::generate_sketches(lowered.program, *ir::parse_target("cuda-sm80"));
    inputs = reference::random_graph_inputs(graph, 1);
    want = reference::interpret(graph, inputs);
    for (int t : lowered.input_tensors) {
      const auto in = std::find(graph.inputs.begin(), graph.inputs.end(), t);
      sources.push_back(in != graph.inputs.end()
                            ? inputs[static_cast<size_t>(in - graph.inputs.begin())].bytes.data()
                            : graph.tensor(t).data->data());
    }
  }
  ir::LoopProgram loops(const scheduler::SpacePoint& point) const {
    return scheduler::lower_schedule(
        scheduler::apply_schedule(lowered.program, sketches[point.sketch].decisions(point.values)),
        "k");
  }
};

// A kernel's test source compiled against the emulator and loaded.
class Emulated {
 public:
  Emulated(const std::string& source, std::string* log) {
    so_ = compile_emulated(dir_, source, log);
    if (so_.empty()) return;
    lib_ = dlopen(so_.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib_) return;
    run_ = reinterpret_cast<Run>(dlsym(lib_, "tlmc_test_run"));
    message_ = reinterpret_cast<Message>(dlsym(lib_, "tlmc_test_message"));
    order_ = reinterpret_cast<Order>(dlsym(lib_, "tlmc_test_order"));
  }
  ~Emulated() {
    if (lib_) dlclose(lib_);
  }
  bool loaded() const { return run_ && message_ && order_; }
  // Runs the kernel on the subgraph's inputs; its outputs, or the emulator's message.
  int run(const Subgraph& g, const ir::LoopProgram& p, bool reverse,
          std::vector<std::vector<uint8_t>>* outputs, std::string* message) const {
    std::vector<std::vector<uint8_t>> buffers;
    for (size_t i = 0; i < p.params.size(); ++i) {
      const ir::Buffer& b = p.buffers[static_cast<size_t>(p.params[i])];
      const size_t bytes = static_cast<size_t>(b.size) * ir::dtype_size(b.dtype);
      buffers.emplace_back(bytes, 0xff);  // outputs start as NaNs: each must be written
      if (static_cast<int>(i) < p.num_inputs)
        std::memcpy(buffers.back().data(), g.sources[i], bytes);
    }
    std::vector<char> scratch(static_cast<size_t>(p.scratch_bytes) + 64, 0);
    std::vector<void*> pointers;
    for (std::vector<uint8_t>& b : buffers) pointers.push_back(b.data());
    order_(reverse ? 1 : 0);
    const int status = run_(pointers.data(), scratch.data());
    *message = message_();
    outputs->assign(buffers.end() - static_cast<long>(g.graph.outputs.size()), buffers.end());
    return status;
  }

 private:
  using Run = int (*)(void* const*, char*);
  using Message = const char* (*)();
  using Order = void (*)(int);
  TempDir dir_;
  std::string so_;
  void* lib_ = nullptr;
  Run run_ = nullptr;
  Message message_ = nullptr;
  Order order_ = nullptr;
};

// The kernel's source run in the emulator in both orders: every output as the reference's.
void expect_matches_in_emulation(const Subgraph& g, const ir::LoopProgram& p,
                                 const std::string& source) {
  std::string log;
  const Emulated kernel(source, &log);
  ASSERT_TRUE(kernel.loaded()) << log << "\n" << source;
  for (bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "reverse order" : "forward order");
    std::vector<std::vector<uint8_t>> got;
    std::string message;
    ASSERT_EQ(kernel.run(g, p, reverse, &got, &message), 0) << message << "\n" << source;
    for (size_t o = 0; o < got.size(); ++o) {
      const float* y = reinterpret_cast<const float*>(got[o].data());
      const float* ref = g.want[o].f32();
      for (int64_t i = 0; i < g.want[o].type.numel(); ++i)
        ASSERT_NEAR(y[i], ref[i], 1e-4 + 1e-3 * std::fabs(ref[i])) << "element " << i;
    }
  }
}

class CudaKernels : public ::testing::TestWithParam<Model> {};

TEST_P(CudaKernels, MatchTheReferenceInEmulation) {
  const Subgraph g(GetParam());
  std::mt19937_64 rng(7);
  std::vector<scheduler::SpacePoint> points;
  for (size_t k = 0; k < g.sketches.size(); ++k)
    points.push_back({k, scheduler::default_values(g.sketches[k])});
  for (int i = 0; i < 4; ++i) points.push_back(scheduler::random_point(g.sketches, rng));
  for (const scheduler::SpacePoint& point : points) {
    SCOPED_TRACE(scheduler::space_schedule_text(g.sketches, point));
    const ir::LoopProgram p = g.loops(point);
    const std::string source = test_source(codegen::emit_cuda_kernel(p, kGpu), p);
    for (const char* target : {"cuda-sm80", "cuda-sm90"}) {
      if (!expect_builds(p, target, point.values == points[0].values))
        std::cout << "NVRTC is not installed: the kernels' build was not checked\n";
    }
    expect_matches_in_emulation(g, p, source);
  }
}

// The -O0 kernel of model `index`, whose first sketch is `sketch` and whose text holds
// `feature`, run with its first barrier deleted: the emulator must stop it on a race (or on
// a read of what its block had not yet written).
void expect_race_without_first_barrier(size_t index, const std::string& name,
                                       const std::string& sketch, const std::string& feature) {
  ASSERT_EQ(std::string(kModels[index].name), name);
  const Subgraph g(kModels[index]);
  ASSERT_NE(g.sketches[0].name().find(sketch), std::string::npos) << g.sketches[0].name();
  const scheduler::SpacePoint point{0, scheduler::default_values(g.sketches[0])};
  const ir::LoopProgram p = g.loops(point);
  std::string source = test_source(codegen::emit_cuda_kernel(p, kGpu), p);
  ASSERT_NE(source.find(feature), std::string::npos) << source;
  const size_t barrier = source.find("__syncthreads();");
  ASSERT_NE(barrier, std::string::npos) << source;
  source.erase(barrier, std::string("__syncthreads();").size());
  std::string log;
  const Emulated kernel(source, &log);
  ASSERT_TRUE(kernel.loaded()) << log;
  std::vector<std::vector<uint8_t>> got;
  std::string message;
  EXPECT_NE(kernel.run(g, p, false, &got, &message), 0) << source;
  // A thread reads before the one that writes has run (the first symptom, in this order),
  // or the two meet within one barrier interval.
  EXPECT_TRUE(message.find("shared-memory race on ") != std::string::npos ||
              message.find("before any thread of its block wrote it") != std::string::npos)
      << message;
}

// A product is tiled through shared memory, and without the barrier between the copies and
// their reads the emulator stops it: the barriers the lowering places are the ones needed.
TEST(CudaKernelsShareMemory, ADeletedBarrierIsARace) {
  expect_race_without_first_barrier(0, "gemm_bias_relu", "multi_level_tiling", "TLMC_SHARED(");
}

// Rows of 200 shared by 128 threads, four warps: the warps' results meet in shared memory,
// and without the barrier before they are read the emulator stops the kernel.
TEST(CudaKernelsShareMemory, ADeletedBarrierOfACrossThreadReductionIsARace) {
  expect_race_without_first_barrier(4, "softmax_wide_rows", "cross_thread_reduction",
                                    "__shfl_xor_sync(");
}

// A GPU whose blocks may declare less shared memory statically than the product's tiles
// take: the kernel places its copies in dynamic shared memory and asks for it at launch.
// It runs as the static one does, NVRTC builds it within the (opt-in) limits, and launched
// with too little dynamic memory the emulator stops it.
TEST(CudaKernelsShareMemory, ArraysBeyondTheStaticLimitLieInDynamicSharedMemory) {
  const Subgraph g(kModels[0]);
  const scheduler::SpacePoint point{0, scheduler::default_values(g.sketches[0])};
  const ir::LoopProgram p = g.loops(point);
  const std::vector<ir::GpuRoot> roots = ir::gpu_roots(p);
  ASSERT_EQ(roots.size(), 1u);
  ir::GpuLimits small = kGpu;
  small.smem_per_block = static_cast<int>(roots[0].shared_bytes) - 16;
  const codegen::CudaKernelSource k = codegen::emit_cuda_kernel(p, small);
  ASSERT_EQ(k.launches.size(), 1u);
  EXPECT_EQ(k.launches[0].dynamic_shared_bytes, roots[0].shared_bytes);
  EXPECT_EQ(codegen::emit_cuda_kernel(p, kGpu).launches[0].dynamic_shared_bytes, 0);
  const std::string source = test_source(k, p);
  EXPECT_NE(source.find("TLMC_DYNAMIC_SHARED_BASE(tlmc_smem);"), std::string::npos) << source;
  EXPECT_NE(source.find("TLMC_SHARED_AT(tlmc_smem, "), std::string::npos) << source;
  EXPECT_EQ(source.find("TLMC_SHARED("), std::string::npos) << source;
  expect_matches_in_emulation(g, p, source);
  if (const auto built = tune::build_kernels(p, small)) {
    ASSERT_EQ(built->resources.size(), 1u);
    EXPECT_EQ(built->resources[0].dynamic_shared_bytes, roots[0].shared_bytes);
    EXPECT_EQ(built->resources[0].shared_bytes, 0) << "nothing static";
    EXPECT_TRUE(ir::limit_violations(small, built->resources[0]).empty());
  }
  std::string starved = source;
  const std::string asked = ", " + std::to_string(roots[0].shared_bytes) + ", nullptr";
  ASSERT_NE(starved.find(asked), std::string::npos) << source;
  starved.replace(starved.find(asked), asked.size(), ", 16, nullptr");
  std::string log;
  const Emulated kernel(starved, &log);
  ASSERT_TRUE(kernel.loaded()) << log;
  std::vector<std::vector<uint8_t>> got;
  std::string message;
  EXPECT_NE(kernel.run(g, p, false, &got, &message), 0);
  EXPECT_NE(message.find("bytes of dynamic shared memory the launch gave"), std::string::npos)
      << message;
}

// The point of the first sketch that takes `values[k]` at the k-th space whose axis ends
// with `suffix` (for the listed suffixes), and the -O0 policy's value elsewhere.
scheduler::SpacePoint point_with(const scheduler::Sketch& sketch,
                                 const std::map<std::string, std::vector<int64_t>>& values) {
  scheduler::SketchCursor cursor(sketch);
  std::map<std::string, size_t> seen;
  scheduler::SpacePoint point{0, {}};
  while (!cursor.done()) {
    const std::string& axis = cursor.space().axis;
    int64_t v = cursor.default_value();
    for (const auto& [suffix, list] : values)
      if (axis.size() > suffix.size() &&
          axis.compare(axis.size() - suffix.size(), suffix.size(), suffix) == 0) {
        const size_t k = seen[suffix]++;
        EXPECT_LT(k, list.size()) << axis;
        if (k < list.size()) v = list[k];
      }
    cursor.choose(v);
    point.values.push_back(v);
  }
  return point;
}

// Every index of `buffer` the program loads or stores at.
std::vector<ir::Expr> indices_of(const ir::Stmt& s, int buffer) {
  std::vector<ir::Expr> out;
  auto expression = [&](const ir::Expr& e) {
    if (!e) return;
    ir::visit_expr(e, [&](const ir::ExprNode& n) {
      if (n.kind == ir::ExprKind::Load && n.var_id == buffer) out.push_back(n.args[0]);
    });
  };
  if (s->kind == ir::StmtKind::Store && s->buffer == buffer) out.push_back(s->index);
  expression(s->index);
  expression(s->value);
  expression(s->cond);
  for (const ir::Stmt& b : s->body)
    for (const ir::Expr& e : indices_of(b, buffer)) out.push_back(e);
  return out;
}

// A thread's virtual threads along an axis are its register tiles a block's threads apart.
// Four of one element along the product's columns against one tile of four: the same
// threads and accumulators (a local array of 4 x 2, not the box of the 49 x 2 columns and
// rows between a thread's first and last), indexed without a division (constants once
// unrolled: registers); the warp's threads store neighbouring elements and read
// neighbouring shared words, which the analytic model counts as fewer sectors and
// wavefronts; it matches the reference in emulation, in both orders, and NVRTC builds it
// within the limits and without a spill.
TEST(CudaKernelsTileThreads, VirtualThreadsInterleaveTheBlocksThreads) {
  const Model m{"matmul_columns", R"(tlmc: 1
name: m
inputs:
  x: {shape: [16, 24]}
weights:
  w: {shape: [24, 64], init: {uniform: [-1, 1]}, seed: 3}
  b: {shape: [64], init: {uniform: [-1, 1]}, seed: 4}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [h]}
  - {op: Add, inputs: [h, b], outputs: [y]}
outputs: [y]
)"};
  const Subgraph g(m);
  ASSERT_NE(g.sketches[0].name().find("multi_level_tiling"), std::string::npos);
  // Rows: tiles of 2, 2 threads; columns: 16 threads, and 4 virtual threads of 1 or 1 of 4.
  const scheduler::SpacePoint interleaved =
      point_with(g.sketches[0], {{".reg", {2, 1}}, {".threads", {2, 16}}, {".vthreads", {1, 4}}});
  const scheduler::SpacePoint tiled =
      point_with(g.sketches[0], {{".reg", {2, 4}}, {".threads", {2, 16}}, {".vthreads", {1, 1}}});
  double sectors[2], wavefronts[2];
  int k = 0;
  for (const scheduler::SpacePoint& point : {interleaved, tiled}) {
    SCOPED_TRACE(scheduler::space_schedule_text(g.sketches, point));
    const ir::LoopProgram p = g.loops(point);
    int accumulators = -1;
    for (size_t b = 0; b < p.buffers.size(); ++b)
      if (p.buffers[b].scope == ir::BufferScope::Local && p.buffers[b].size > 1)
        accumulators = static_cast<int>(b);
    ASSERT_GE(accumulators, 0);
    EXPECT_EQ(p.buffers[static_cast<size_t>(accumulators)].size, 8);
    for (const ir::Expr& index : indices_of(p.body, accumulators))
      ir::visit_expr(index, [&](const ir::ExprNode& n) {
        EXPECT_FALSE(n.kind == ir::ExprKind::Binary && (n.binary_op == ir::BinaryOp::FloorDiv ||
                                                        n.binary_op == ir::BinaryOp::FloorMod))
            << ir::expr_str(index, [](int b) { return "b" + std::to_string(b); });
      });
    const scheduler::GpuEstimate e = scheduler::estimate_gpu_time(p, kGpu, {});
    ASSERT_EQ(e.launches.size(), 1u);
    EXPECT_EQ(e.launches[0].threads, 32);
    sectors[k] = e.launches[0].sector_bytes;
    wavefronts[k] = e.launches[0].shared_wavefronts;
    ++k;
    const std::string source = test_source(codegen::emit_cuda_kernel(p, kGpu), p);
    if (!expect_builds(p, "cuda-sm80", true))
      std::cout << "NVRTC is not installed: the kernel's build was not checked\n";
    expect_matches_in_emulation(g, p, source);
  }
  EXPECT_LT(sectors[0], sectors[1]);
  EXPECT_LT(wavefronts[0], wavefronts[1]);
  // -O2 ranks the interleavings of the CUDA model's points: the tile of 4 along the
  // columns gives 2 x 2 and 1 x 4 (virtual threads x tile); 2 along the rows gives 2 x 1.
  const std::vector<scheduler::SpacePoint> variants = tune::interleaved_variants(g.sketches, tiled);
  EXPECT_EQ(variants.size(), 3u);
  EXPECT_NE(std::find(variants.begin(), variants.end(), interleaved), variants.end());
}

// A product whose operands' rows are multiples of four floats: the block's threads fill the
// shared copies 16 bytes each at a time (TLMC_COPY4, the emulator checking each address's
// alignment), and the kernel matches the reference. A row of 37 floats (gemm_bias_relu's
// first operand) is copied one element at a time.
TEST(CudaKernelsShareMemory, CopiesOfAlignedRowsMoveSixteenBytesAThread) {
  const Model m{"matmul_rows_of_four", R"(tlmc: 1
name: m
inputs:
  x: {shape: [16, 24]}
weights:
  w: {shape: [24, 64], init: {uniform: [-1, 1]}, seed: 3}
nodes:
  - {op: MatMul, inputs: [x, w], outputs: [y]}
outputs: [y]
)"};
  for (const Model& model : {m, kModels[0]}) {
    SCOPED_TRACE(model.name);
    const Subgraph g(model);
    const scheduler::SpacePoint point{0, scheduler::default_values(g.sketches[0])};
    const ir::LoopProgram p = g.loops(point);
    const std::string source = test_source(codegen::emit_cuda_kernel(p, kGpu), p);
    size_t copies = 0;
    for (size_t at = source.find("TLMC_COPY4("); at != std::string::npos;
         at = source.find("TLMC_COPY4(", at + 1))
      ++copies;
    EXPECT_EQ(copies, model.name == m.name ? 2u : 1u) << source;
    if (!expect_builds(p, "cuda-sm80", true))
      std::cout << "NVRTC is not installed: the kernel's build was not checked\n";
    expect_matches_in_emulation(g, p, source);
  }
}

INSTANTIATE_TEST_SUITE_P(Operators, CudaKernels, ::testing::ValuesIn(kModels),
                         [](const ::testing::TestParamInfo<Model>& p) {
                           return std::string(p.param.name);
                         });

// y[b * T + t] = x[b * T + t] over `blocks` blocks of `threads` threads (a copy).
ir::LoopProgram flat_copy(int64_t blocks, int64_t threads) {
  ir::LoopProgram p;
  p.name = "copy";
  const int64_t n = blocks * threads;
  p.buffers = {{"x", ir::DType::Float32, n, ir::BufferScope::Param, 0, std::nullopt},
               {"y", ir::DType::Float32, n, ir::BufferScope::Param, 0, std::nullopt}};
  p.params = {0, 1};
  p.num_inputs = 1;
  const ir::Expr b = ir::make_var(0, "b"), t = ir::make_var(1, "t");
  const ir::Expr i = b * threads + t;
  p.body =
      ir::make_for(0, "b", blocks, ir::LoopKind::GpuBlock,
                   ir::make_for(1, "t", threads, ir::LoopKind::GpuThread,
                                ir::make_store(1, i, ir::make_load(ir::DType::Float32, 0, {i}))));
  p.next_var = 2;
  return p;
}

// A kernel's loop variables, and so its index arithmetic, are 32-bit where every index
// provably fits (half the registers and instructions of 64-bit arithmetic), 64-bit where
// one may not: a copy of 2^31 elements or more, a product of indices chosen by a value in
// memory that may pass 2^31, a loop of more iterations than an int counts.
TEST(CudaKernelsIndex, IndicesAre32BitWhereTheyFit) {
  const std::string small = codegen::emit_cuda_kernel(flat_copy(4096, 256), kGpu).text;
  EXPECT_NE(small.find("const int v0 = blockIdx.x;"), std::string::npos) << small;
  EXPECT_NE(small.find("const int v1 = threadIdx.x;"), std::string::npos) << small;
  EXPECT_EQ(small.find("int64_t"), std::string::npos) << small;
  const std::string large =
      codegen::emit_cuda_kernel(flat_copy((int64_t{1} << 23) + 1, 256), kGpu).text;
  EXPECT_NE(large.find("const int64_t v0 = blockIdx.x;"), std::string::npos) << large;
  EXPECT_NE(large.find("const int64_t v1 = threadIdx.x;"), std::string::npos) << large;
  // A product of loop variables chosen by a value read from memory is computed in the
  // variables' type: its range decides too (here up to 4095 x 10^6).
  ir::LoopProgram chosen = flat_copy(4096, 256);
  const ir::Expr b = ir::make_var(0, "b"), t = ir::make_var(1, "t");
  const ir::Expr positive = ir::make_binary(ir::BinaryOp::LT, ir::make_float(0),
                                            ir::make_load(ir::DType::Float32, 0, {b * 256 + t}));
  const ir::Expr far = ir::make_select(positive, b, t) * 1000000;
  chosen.body = ir::make_for(
      0, "b", 4096, ir::LoopKind::GpuBlock,
      ir::make_for(1, "t", 256, ir::LoopKind::GpuThread,
                   ir::make_store(
                       1, b * 256 + t,
                       ir::make_cast(ir::DType::Float32, ir::make_binary(ir::BinaryOp::FloorMod,
                                                                         far, ir::make_int(7))))));
  const std::string by_choice = codegen::emit_cuda_kernel(chosen, kGpu).text;
  EXPECT_NE(by_choice.find("const int64_t v0 = blockIdx.x;"), std::string::npos) << by_choice;
  // A loop of more iterations than an int counts.
  ir::LoopProgram long_loop = flat_copy(1, 1);
  long_loop.body =
      ir::make_for(0, "b", 1, ir::LoopKind::GpuBlock,
                   ir::make_for(2, "w", int64_t{3} << 30, ir::LoopKind::Serial,
                                ir::make_store(1, ir::make_int(0), ir::make_float(1))));
  long_loop.next_var = 3;
  const std::string counted = codegen::emit_cuda_kernel(long_loop, kGpu).text;
  EXPECT_NE(counted.find("for (int64_t v2 = 0;"), std::string::npos) << counted;
  // The largest that fits: 2^31 - 1 is the last index.
  const std::string edge = codegen::emit_cuda_kernel(flat_copy(int64_t{1} << 23, 256), kGpu).text;
  EXPECT_NE(edge.find("const int v0 = blockIdx.x;"), std::string::npos) << edge;
}

}  // namespace
}  // namespace tlmc::test
