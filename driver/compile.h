// The compiler pipeline, as one readable list (compile.cc): read the model, partition it,
// lower and schedule each distinct subgraph, plan memory, generate C. Then the outputs.
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "codegen/emit_c.h"
#include "codegen/model_plan.h"
#include "frontend/reduced_precision.h"
#include "ir/gpu_occupancy.h"
#include "ir/graph.h"
#include "ir/target.h"
#include "toolchain/sanitized_run.h"

namespace tlmc::driver {

// The activation layout between subgraphs (--activation-layout).
enum class ActivationLayout {
  Auto,          // -O3 tunes all three and builds the fastest, or a mix of them chain by
                 // chain; other levels follow the records, else channels-last on a vector
                 // target when the model has a convolution of group 1 (the plan -O2 tunes)
  Model,         // the model's layout throughout (only its subgraphs are tuned)
  ChannelsLast,  // convolutions and pools channels-last between conversions
  Blocked,       // convolutions and pools with channels in blocks of the vector width
};

struct CompileOptions {
  std::string model_path;
  std::string name;  // C prefix of the API; empty: the model's name
  // ONNX models: shapes for graph inputs with symbolic dimensions (--input-shape).
  std::map<std::string, ir::Shape> input_shapes;
  ir::Target target;
  int opt_level = 0;  // -O0 .. -O3 (the command line gives -O2 unless told)
  // -O2, -O3: measurements in all (--trials); 0: 32 (-O2) or 64 (-O3) per distinct subgraph
  int64_t trials = 0;
  // -O3: a subgraph is left alone after this many trials without a better schedule (0: never)
  int64_t early_stopping = 256;
  // -O3's search (--search): the evolutionary search seeded by the language model's proposals,
  // the same search seeded by uniform samples (as without a model), or uniform sampling
  enum class Search { Evolutionary, Unseeded, Random };
  Search search = Search::Evolutionary;
  // -O2, -O3: tune only the subgraphs with these workload keys (--tune-only; all when empty):
  // a benchmark's way to tune one subgraph of a model
  std::vector<std::string> tune_only;
  // -O1 .. -O3: the language model's file (--lm-model); empty: the bundled model
  std::string lm_model;
  // -O1 on a CPU target: the speedup model that checks the language model's drafts
  // (--verifier); empty: the bundled one; "none": the likeliest draft as it is
  std::string verifier;
  ActivationLayout activation_layout = ActivationLayout::Auto;
  // --precision bf16: matrix products read their operands rounded to bfloat16 and
  // accumulate in float32 (frontend/reduced_precision.h, with `precision`'s choices); false
  // (--precision fp32, the default): everything in float32.
  bool bf16 = false;
  frontend::PrecisionOptions precision;
  // -O1 .. -O3: tuning progress, report and compile time; nullptr: quiet
  std::ostream* progress_stream = nullptr;
  bool progress_live = false;   // a line per tuning round on progress_stream
  bool progress_lines = false;  // those lines each ending in a newline, not rewritten in place
  int jobs = 1;                 // -j: threads of the compiler's own work
  int threads = 0;              // default thread count baked into the library; 0: all cores
  bool profile = false;         // time every kernel call (--profile; CodegenOptions::profile)
  // Tuning records to use (--tuning-db); empty: none. The best record of a kernel's workload
  // on this target is its schedule, at every optimisation level.
  std::string tuning_db;
  // >= 0: every kernel's schedule is drawn at random from its spaces, with this seed mixed
  // with the kernel's workload key (tests of the spaces; tuning records are not read).
  int64_t random_schedule_seed = -1;
  std::vector<std::string> dumps;  // "graph", "te", "sketch", "loops", "resources": to dump_stream
  std::ostream* dump_stream = nullptr;
  std::ostream* log_stream = nullptr;  // -v: pass timings; nullptr: quiet
};

struct CompiledModel {
  ir::Graph graph;  // as read: the reference --check compares with (compiled after folding)
  codegen::ModelPlan plan;
  std::vector<codegen::GeneratedFile> files;
  std::vector<std::string> inputs_read;  // the model file and every weight file it names
  // A CUDA target's kernels as ptxas built them for the target's SM (NVRTC, in process),
  // with their threads per block; empty, with the reason in `cuda_unchecked`, when NVRTC
  // was not found.
  std::vector<ir::KernelResources> cuda_kernels;
  std::string cuda_unchecked;
  bool profiled = false;  // emitted with a timer around every call (CompileOptions::profile)
  bool bf16 = false;      // its products compute in bfloat16 (CompileOptions::bf16)
  ir::Graph bf16_graph;   // then: the graph after reduced_precision, which the library computes
};

// Reads the model (YAML or ONNX, by its extension), verified, as written: no folding.
ir::Graph read_model(const CompileOptions& options);

// Throws Diagnostic on bad input, InternalError on a compiler bug.
CompiledModel compile_model(const CompileOptions& options);

// `tlmc import`: writes the model as YAML at `yaml_path` (spec/graph-yaml.md), its weights
// in a binary file beside it (the YAML's stem + ".bin"); returns the paths written.
std::vector<std::string> import_model(const CompileOptions& options, const std::string& yaml_path);

enum class EmitKind { Lib, Source, Header, Obj };

// What compiles the generated C into objects (--cc): Clang 14's libraries inside tlmc, the
// compiler that -O3's measurements used, so the shipped code is the measured code; or the
// system's C compiler ($CC, else cc).
enum class CCompiler { InProcess, System };

// Writes what `kind` asks for at `out_path` (spec/driver.md): all or nothing, never a
// partial output. Returns the paths written.
std::vector<std::string> write_output(const CompiledModel& model, EmitKind kind,
                                      const std::string& out_path, const ir::Target& target,
                                      CCompiler cc = CCompiler::InProcess);

// Why the GPU of `target` (one of its SM, found here: the target runs_here) cannot run what
// tlmc builds for it, or "": NVRTC (measuring) and nvcc (--check, --profile) are needed, and
// a driver of NVRTC's CUDA major version or later to load their code.
std::string gpu_cannot_run(const ir::Target& target);

// Builds a shared library of the model in `dir` (for isolated runs); returns its path. A CUDA
// target's exports NAME_hosted_run (codegen::hosted_harness; hosted_entry names it): built
// by nvcc when its GPU runs here (the target runs_here), else for the CPU emulator.
std::string build_shared_library(const CompiledModel& model, const std::string& dir,
                                 const ir::Target& target, CCompiler cc = CCompiler::InProcess);

// Writes the model's files in `dir` and runs them built with sanitizers as a program of
// their own (toolchain/sanitized_run.h; `tlmc --check --sanitize`): a CPU target's only.
toolchain::SanitizedRun run_sanitized_library(const CompiledModel& model, const std::string& dir,
                                              const ir::Target& target,
                                              const std::vector<std::vector<uint8_t>>& inputs,
                                              const std::vector<size_t>& output_bytes,
                                              int timeout_seconds);

// The entry run_isolated runs in build_shared_library's library: the model's name, with
// "_hosted" for a CUDA target.
std::string hosted_entry(const CompiledModel& model, const ir::Target& target);

// "a.yaml b.bin" style dependency line for a build system: "OUT: IN IN ...".
std::string depfile_text(const std::string& output, const std::vector<std::string>& inputs);

}  // namespace tlmc::driver
