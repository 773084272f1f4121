// The `tlmc` command (spec/driver.md): options, then the pipeline of driver/compile.h.
#include <unistd.h>

#include <boost/program_options.hpp>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "driver/check.h"
#include "driver/compile.h"
#include "driver/db_command.h"
#include "driver/lm_command.h"
#include "driver/profile.h"
#include "ir/op_schema.h"
#include "scheduler/tuning_db.h"

namespace po = boost::program_options;
using namespace tlmc;

namespace {

constexpr const char* kVersion = TLMC_VERSION;  // the project version, from CMake

// Exit statuses of spec/driver.md.
enum Exit { kOk = 0, kBadInput = 1, kBadUsage = 2, kInternal = 3 };

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// "NAME=1x3x224x224" into options.input_shapes.
void parse_input_shape(const std::string& spec, driver::CompileOptions& options) {
  const size_t eq = spec.rfind('=');
  const std::string bad =
      "--input-shape takes NAME=D0xD1x... (e.g. input=1x3x224x224), not '" + spec + "'";
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) throw UsageError(bad);
  ir::Shape shape;
  std::stringstream dims(spec.substr(eq + 1));
  std::string d;
  while (std::getline(dims, d, 'x')) {
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos || d.size() > 12)
      throw UsageError(bad);
    shape.push_back(std::stoll(d));
  }
  options.input_shapes[spec.substr(0, eq)] = shape;
}

// --target, then each --target-option, then --threads: the descriptor schedules are chosen
// for and records keyed by.
ir::Target target_from_options(const po::variables_map& vm) {
  const std::string name = vm["target"].as<std::string>();
  std::optional<ir::Target> target = ir::parse_target(name);
  if (!target) throw UsageError(ir::unknown_target(name));
  if (vm.count("target-option"))
    for (const std::string& option : vm["target-option"].as<std::vector<std::string>>())
      if (const std::string error = ir::set_target_option(*target, option); !error.empty())
        throw UsageError(error);
  const int threads = vm["threads"].as<int>();
  if (threads < 0) throw UsageError("--threads takes a count >= 0");
  if (threads > 0 && target->is_cuda())
    throw UsageError("--threads sets the CPU threads of the generated code; a CUDA target's " +
                     std::string("code runs on the GPU, whose threads its schedules choose"));
  // Schedules are tuned for, and records keyed by, the threads the code will run with.
  if (threads > 0) target->cores = threads;
  // A GPU of the target's SM that cannot run what this toolkit builds: nothing runs on it
  // (--check emulates, -O2 estimates), said once.
  if (target->is_cuda() && target->runs_here)
    if (const std::string why = driver::gpu_cannot_run(*target); !why.empty()) {
      std::cerr << "tlmc: note: nothing runs on the GPU (" << target->gpu.device << "): " << why
                << "\n";
      target->runs_here = false;
    }
  return *target;
}

int run(int argc, char** argv) {
  if (argc >= 2 && std::string(argv[1]) == "db") {
    try {
      return driver::run_db_command(std::vector<std::string>(argv + 2, argv + argc));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  if (argc >= 2 && std::string(argv[1]) == "lm") {
    try {
      return driver::run_lm_command(std::vector<std::string>(argv + 2, argv + argc));
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  po::options_description visible(
      "Usage: tlmc MODEL [options]\n"
      "       tlmc --check MODEL [options]\n"
      "       tlmc --profile MODEL [options]\n"
      "       tlmc import MODEL.onnx -o MODEL.yaml [--input-shape ...]\n"
      "       tlmc db list|export|import|prune|check|retime [...]\n"
      "                                                       (tlmc db --help)\n"
      "       tlmc lm keys|overlap|sample|pretrain|demonstrate|finetune|verifier [...]\n"
      "                                                       (tlmc lm --help)\n\n"
      "Compiles MODEL (a .yaml graph or an .onnx file) into a C kernel library.\n\nOptions");
  po::options_description_easy_init option = visible.add_options();
  option("output,o", po::value<std::string>(),
         "output: a folder (sources + header), or a file named lib*.a (default: libNAME.a here)");
  option("emit", po::value<std::string>(),
         "lib|source|header|obj (default: lib when -o ends in .a, else source)");
  option("name", po::value<std::string>(),
         "C prefix of the generated API (default: the model's name)");
  option("target", po::value<std::string>()->default_value("host"),
         "host | x86-64 | x86-64-avx2 | x86-64-avx512 | x86-64-avx512-bf16 (with AVX512_BF16) | "
         "x86-64-amx (with AVX512_BF16 and AMX) | cuda-sm80 (an A100-SXM's limits) | "
         "cuda-sm90 (an H100-SXM's) | cuda (the GPU of this machine)");
  option("target-option", po::value<std::vector<std::string>>()->composing(),
         "KEY=VALUE: one field of the target's descriptor, as --print-target writes it (such "
         "as l2=1024K, sms=114, smem/block-optin=99K); repeatable");
  option("opt,O", po::value<int>()->default_value(2),
         "-O0 .. -O3: how hard to look for fast schedules (-O0: fixed; -O1: the language "
         "model's likeliest, unmeasured; -O2: the model's proposals, the best few measured "
         "here and recorded (-O1 when this machine cannot run the target); -O3: evolutionary "
         "search seeded by the model, measured here and recorded)");
  option("progress", po::bool_switch(),
         "-O2, -O3: a line per tuning round on stderr (the task, its best, the budget spent, "
         "the time so far in proposing, compiling and running) even when it is no terminal");
  option("trials", po::value<int64_t>()->default_value(0),
         "-O2, -O3: measurements in all, spread over the tasks (0: 32 per task at -O2, 64 at "
         "-O3; a task is a distinct subgraph: of the chosen activation layout at -O2, of "
         "either at -O3)");
  option("early-stopping",
         po::value<int64_t>()->default_value(driver::CompileOptions{}.early_stopping),
         "-O3: a subgraph's search ends after this many trials without a faster schedule (0: "
         "it spends its whole share of --trials)");
  option("tune-only", po::value<std::string>(),
         "-O2, -O3: tune only the subgraphs with these workload keys (comma-separated, as "
         "--dump te prints them; for benchmarks: the others keep their records, else the -O0 "
         "schedule)");
  option("lm-model", po::value<std::string>(),
         "-O1 .. -O3: the language model file to use (from `tlmc lm pretrain` or `tlmc lm "
         "finetune`; default: the bundled model)");
  option("verifier", po::value<std::string>(),
         "-O1 on a CPU target: the speedup model that checks the language model's drafts "
         "against the -O0 schedule, keeping -O0 unless a draft is predicted clearly faster "
         "(from `tlmc lm verifier`; default: the bundled one; none: the likeliest draft as "
         "it is)");
  option("tuning-db", po::value<std::string>(),
         "tuning records to use, and -O3 extends (default: $TLMC_TUNING_DB, else "
         "~/.cache/tlmc/tuning.db)");
  option("search", po::value<std::string>()->default_value("evolutionary"),
         "-O3: evolutionary (guided by a learned cost model, seeded by the language model's "
         "proposals) | unseeded (the same search seeded by uniform samples, as without a "
         "model) | random (uniform sampling)");
  option("activation-layout", po::value<std::string>()->default_value("auto"),
         "the layout of activations between subgraphs: auto (-O3 tunes the three below, "
         "each with its conversions into dense convolutions apart and fused into them, "
         "times the plans whole and builds the fastest; otherwise the records decide, else "
         "channels-last with fused conversions where the model has a convolution of group "
         "1) | model | channels-last (convolutions and pools in [N, "
         "spatial..., C], converted at the graph's boundary) | blocked (in [N, C/B, "
         "spatial..., B], B the vector width, where the channels are whole blocks)");
  option("precision", po::value<std::string>()->default_value("fp32"),
         "fp32 | bf16: bf16 rounds the operands of matrix products to bfloat16, which they "
         "accumulate in float32 (everything else stays float32; a CPU target with AVX512_BF16 "
         "or AMX)");
  option("precision-ops", po::value<std::string>()->default_value("all"),
         "with --precision bf16, the products that compute in it: all | matmul (MatMul and "
         "Gemm) | conv");
  option("keep-fp32", po::value<std::string>(),
         "with --precision bf16: products left in float32, by node name (comma-separated)");
  option("bf16-storage", po::value<std::string>()->default_value("products"),
         "with --precision bf16, where an activation that products read rounded is stored in "
         "bfloat16 alone: products (where only products read it; other readers, a residual "
         "sum, read float32) | shared (wherever it is not a graph input or output: the other "
         "readers read it widened, as OpenVINO's default does)");
  option("input-shape", po::value<std::vector<std::string>>()->composing(),
         "NAME=1x3x224x224: the shape of an ONNX input with symbolic dimensions (repeatable)");
  option("threads", po::value<int>()->default_value(0),
         "worker threads the generated code uses (0: all cores)");
  option("cc", po::value<std::string>()->default_value("in-process"),
         "what compiles the generated C for --emit=lib|obj and --check: in-process (Clang's "
         "libraries inside tlmc, as -O3 measured) or system ($CC, else cc)");
  option("jobs,j", po::value<int>()->default_value(0),
         "how much of the compiler's own work runs at once, such as -O3's candidates compiled "
         "in child processes (0: one per core)");
  option("dump", po::value<std::string>(),
         "print IR levels to stdout: graph,te,sketch,loops (sketch: each kernel's sketches "
         "and their decision spaces); te-text: each kernel's tensor expressions in the "
         "versioned text that reads back (docs/driver.md); precision: how each kernel computes its "
         "products "
         "(float32, bf16 by AMX tiles or vdpbf16ps, or widened to float32 and why); "
         "resources: a CUDA target's kernels as ptxas built them");
  option("check", "compile, run on random inputs and compare with the reference interpreter");
  option("sanitize",
         "with --check: build the library with -fsanitize=address,undefined by the system C "
         "compiler ($CC, else cc) and run it as a program of its own, every buffer an "
         "allocation of its exact size; a sanitizer's report fails the check (a CPU target)");
  option("profile",
         "compile as the build would, run on random inputs for a second with a timer around "
         "each kernel call, and print each call's time, share and GFLOP/s");
  option("depfile,MF", po::value<std::string>(), "write a Makefile dependency line for the output");
  option("verbose,v", "print the time of each compiler pass");
  option("version", "print the version");
  option("print-target", "print the hardware descriptor of --target (and --threads), then exit");
  option("help,h", "print this help");
  po::options_description hidden;
  hidden.add_options()("model", po::value<std::vector<std::string>>());
  // Draws every kernel's schedule at random from its spaces: for testing the spaces.
  hidden.add_options()("random-schedule-seed", po::value<int64_t>());
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description pos;
  pos.add("model", 2);  // MODEL, or: import MODEL
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(all).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  if (vm.count("help")) {
    std::cout << visible << "\nSupported operators: " << ir::supported_op_list() << "\n";
    return kOk;
  }
  if (vm.count("version")) {
    std::cout << "tlmc " << kVersion << "\n";
    return kOk;
  }
  if (vm.count("print-target")) {
    std::cout << target_from_options(vm).descriptor() << "\n";
    return kOk;
  }
  if (!vm.count("model")) throw UsageError("no model given");
  std::vector<std::string> positional = vm["model"].as<std::vector<std::string>>();
  const bool import = positional.size() == 2 && positional[0] == "import";
  if (positional.size() == 2 && !import)
    throw UsageError("one model at a time (or: tlmc import MODEL.onnx -o MODEL.yaml)");
  if (positional.size() == 1 && positional[0] == "import")
    throw UsageError("tlmc import needs a model");

  driver::CompileOptions options;
  options.model_path = positional.back();
  if (vm.count("name")) options.name = vm["name"].as<std::string>();
  options.target = target_from_options(vm);
  options.opt_level = vm["opt"].as<int>();
  if (options.opt_level < 0 || options.opt_level > 3) throw UsageError("-O takes 0, 1, 2 or 3");
  if (vm.count("lm-model")) options.lm_model = vm["lm-model"].as<std::string>();
  if (vm.count("verifier")) options.verifier = vm["verifier"].as<std::string>();
  options.trials = vm["trials"].as<int64_t>();
  if (options.trials < 0) throw UsageError("--trials takes a count >= 0");
  options.early_stopping = vm["early-stopping"].as<int64_t>();
  if (options.early_stopping < 0) throw UsageError("--early-stopping takes a count >= 0");
  const std::string search = vm["search"].as<std::string>();
  using Search = driver::CompileOptions::Search;
  if (search == "evolutionary")
    options.search = Search::Evolutionary;
  else if (search == "unseeded")
    options.search = Search::Unseeded;
  else if (search == "random")
    options.search = Search::Random;
  else
    throw UsageError("--search takes evolutionary, unseeded or random, not '" + search + "'");
  if (vm.count("tune-only")) {
    std::istringstream keys(vm["tune-only"].as<std::string>());
    for (std::string key; std::getline(keys, key, ',');)
      if (!key.empty()) options.tune_only.push_back(key);
    if (options.tune_only.empty()) throw UsageError("--tune-only takes workload keys");
  }
  const std::string layout = vm["activation-layout"].as<std::string>();
  if (layout != "auto" && layout != "model" && layout != "channels-last" && layout != "blocked")
    throw UsageError("--activation-layout takes auto, model, channels-last or blocked, not '" +
                     layout + "'");
  options.activation_layout = layout == "model"           ? driver::ActivationLayout::Model
                              : layout == "channels-last" ? driver::ActivationLayout::ChannelsLast
                              : layout == "blocked"       ? driver::ActivationLayout::Blocked
                                                          : driver::ActivationLayout::Auto;
  const std::string precision = vm["precision"].as<std::string>();
  if (precision != "fp32" && precision != "bf16")
    throw UsageError("--precision takes fp32 or bf16, not '" + precision + "'");
  options.bf16 = precision == "bf16";
  const std::string ops = vm["precision-ops"].as<std::string>();
  if (ops != "all" && ops != "matmul" && ops != "conv")
    throw UsageError("--precision-ops takes all, matmul or conv, not '" + ops + "'");
  options.precision.ops = ops == "matmul" ? frontend::PrecisionOptions::Ops::MatMul
                          : ops == "conv" ? frontend::PrecisionOptions::Ops::Conv
                                          : frontend::PrecisionOptions::Ops::All;
  if (vm.count("keep-fp32")) {
    std::istringstream names(vm["keep-fp32"].as<std::string>());
    for (std::string name; std::getline(names, name, ',');)
      if (!name.empty()) options.precision.keep_fp32.push_back(name);
    if (options.precision.keep_fp32.empty()) throw UsageError("--keep-fp32 takes node names");
  }
  const std::string storage = vm["bf16-storage"].as<std::string>();
  if (storage != "products" && storage != "shared")
    throw UsageError("--bf16-storage takes products or shared, not '" + storage + "'");
  if (storage == "shared") options.precision.storage = frontend::PrecisionOptions::Storage::Shared;
  if (!options.bf16 && (!vm["precision-ops"].defaulted() || vm.count("keep-fp32") ||
                        !vm["bf16-storage"].defaulted()))
    throw UsageError("--precision-ops, --keep-fp32 and --bf16-storage go with --precision bf16");
  options.progress_stream = &std::cerr;
  // A terminal gets one line rewritten each round; --progress, a line each round (a log).
  options.progress_live = isatty(STDERR_FILENO) != 0 || vm["progress"].as<bool>();
  options.progress_lines = isatty(STDERR_FILENO) == 0;
  if (vm.count("input-shape"))
    for (const std::string& spec : vm["input-shape"].as<std::vector<std::string>>())
      parse_input_shape(spec, options);
  options.threads = vm["threads"].as<int>();
  options.tuning_db = vm.count("tuning-db") ? vm["tuning-db"].as<std::string>()
                                            : scheduler::default_tuning_db_path();
  if (vm["jobs"].as<int>() < 0) throw UsageError("-j takes a count >= 0");
  options.jobs = vm["jobs"].as<int>() > 0
                     ? vm["jobs"].as<int>()
                     : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (vm.count("dump")) {
    options.dumps = split_commas(vm["dump"].as<std::string>());
    for (const std::string& d : options.dumps)
      if (d != "graph" && d != "te" && d != "te-text" && d != "loops" && d != "sketch" &&
          d != "resources" && d != "precision")
        throw UsageError(
            "--dump takes graph, te, te-text, sketch, loops, precision or resources, not '" + d +
            "'");
    options.dump_stream = &std::cout;
  }
  if (vm.count("verbose")) options.log_stream = &std::cerr;
  if (vm.count("random-schedule-seed")) {
    options.random_schedule_seed = vm["random-schedule-seed"].as<int64_t>();
    if (options.random_schedule_seed < 0)
      throw UsageError("--random-schedule-seed takes a seed >= 0");
  }

  if (import) {
    if (!vm.count("output")) throw UsageError("tlmc import needs -o MODEL.yaml");
    const std::string out = vm["output"].as<std::string>();
    if (!ends_with(out, ".yaml") && !ends_with(out, ".yml"))
      throw UsageError("tlmc import writes a .yaml file; -o " + out + " does not end in .yaml");
    driver::import_model(options, out);
    return kOk;
  }

  const std::string cc_name = vm["cc"].as<std::string>();
  if (cc_name != "in-process" && cc_name != "system")
    throw UsageError("--cc takes in-process or system, not '" + cc_name + "'");
  const driver::CCompiler cc =
      cc_name == "system" ? driver::CCompiler::System : driver::CCompiler::InProcess;

  if (vm.count("check") && vm.count("profile"))
    throw UsageError("--check and --profile are two runs: ask for one at a time");
  const bool sanitize = vm.count("sanitize") > 0;
  if (sanitize && !vm.count("check"))
    throw UsageError("--sanitize is a way to run --check: give both");
  if (sanitize && options.target.is_cuda())
    throw UsageError(
        "--sanitize builds a CPU target's library; a CUDA target's --check runs its "
        "kernels on the GPU or in the CPU emulator");
  options.profile = vm.count("profile") > 0;
  driver::CompiledModel model = driver::compile_model(options);

  if (options.profile) {
    driver::print_profile(std::cout, driver::profile_model(model, options.target, cc));
    return kOk;
  }

  if (vm.count("check")) {
    driver::CheckResult r = driver::check_model(model, options.target, 1, cc, sanitize);
    driver::print_check(std::cout, r);
    if (!r.compiled_exactly) return kInternal;
    return r.passed ? kOk : (r.bf16 ? kBadInput : kInternal);
  }

  const std::string out =
      vm.count("output") ? vm["output"].as<std::string>() : "lib" + model.plan.name + ".a";
  driver::EmitKind kind = ends_with(out, ".a") ? driver::EmitKind::Lib : driver::EmitKind::Source;
  if (vm.count("emit")) {
    const std::string e = vm["emit"].as<std::string>();
    if (e == "lib")
      kind = driver::EmitKind::Lib;
    else if (e == "source")
      kind = driver::EmitKind::Source;
    else if (e == "header")
      kind = driver::EmitKind::Header;
    else if (e == "obj")
      kind = driver::EmitKind::Obj;
    else
      throw UsageError("--emit takes lib, source, header or obj, not '" + e + "'");
  }
  driver::write_output(model, kind, out, options.target, cc);
  if (vm.count("depfile")) {
    const std::string dep = vm["depfile"].as<std::string>();
    std::ofstream f(dep);
    f << driver::depfile_text(out, model.inputs_read);
    if (!f) throw Diagnostic({dep}, "cannot write the dependency file");
  }
  return kOk;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const UsageError& e) {
    std::cerr << "tlmc: error: " << e.what() << "\nRun 'tlmc --help' for the options.\n";
    return kBadUsage;
  } catch (const Diagnostic& d) {
    std::cerr << d.format() << "\n";
    return kBadInput;
  } catch (const InternalError& e) {
    std::cerr << "tlmc: internal error: " << e.what() << "\n";
    return kInternal;
  } catch (const std::exception& e) {
    std::cerr << "tlmc: internal error: " << e.what() << "\n";
    return kInternal;
  }
}
