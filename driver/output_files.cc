#include "driver/output_files.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "codegen/emit_c.h"
#include "codegen/emit_cuda.h"
#include "driver/compile.h"
#include "ir/diagnostic.h"
#include "toolchain/assemble_in_process.h"
#include "toolchain/cc.h"
#include "toolchain/cuda_toolkit.h"
#include "toolchain/sanitized_run.h"

namespace tlmc::driver {

namespace fs = std::filesystem;

StagingDir::StagingDir(const fs::path& near) {
  fs::path parent = near.empty() ? fs::current_path() : near;
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string templ = (parent / ".tlmc-XXXXXX").string();
  if (!mkdtemp(templ.data()))
    throw Diagnostic({parent.string()}, "cannot create a temporary folder here");
  path_ = templ;
}

StagingDir::~StagingDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_files(const std::vector<codegen::GeneratedFile>& files, const fs::path& dir) {
  for (const codegen::GeneratedFile& f : files) {
    std::ofstream out(dir / f.name, std::ios::binary);
    out.write(f.contents.data(), static_cast<std::streamsize>(f.contents.size()));
    if (!out) throw Diagnostic({(dir / f.name).string()}, "cannot write the file");
  }
}

void replace_file(const fs::path& path, const std::string& text, const std::string& what) {
  const fs::path temp = path.string() + ".tmp";
  {
    std::ofstream f(temp, std::ios::trunc);
    if (!(f << text) || !f.flush()) throw Diagnostic({path.string()}, "cannot write " + what);
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) throw Diagnostic({path.string()}, "cannot write " + what);
}

namespace {
bool same_bytes(const fs::path& a, const fs::path& b) {
  std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
  return std::equal(std::istreambuf_iterator<char>(x), std::istreambuf_iterator<char>(),
                    std::istreambuf_iterator<char>(y), std::istreambuf_iterator<char>());
}

}  // namespace

void commit(const std::vector<std::pair<fs::path, fs::path>>& moves) {
  for (const auto& [from, to] : moves) {
    std::error_code ec;
    if (fs::is_directory(to, ec))
      throw Diagnostic({to.string()}, "is a folder; cannot write the output file there");
  }
  for (const auto& [from, to] : moves) {
    std::error_code ec;
    // An unchanged file is left alone, so that what includes or links it is not rebuilt.
    if (fs::exists(to, ec) && fs::file_size(to, ec) == fs::file_size(from, ec) &&
        same_bytes(from, to))
      continue;
    fs::rename(from, to, ec);
    if (ec) {
      fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
      if (ec) throw Diagnostic({to.string()}, "cannot write the output: " + ec.message());
    }
  }
}

namespace {

// The files a CPU target's library is built from, in the folder write_files wrote.
std::vector<std::string> c_library_sources(const std::string& name) {
  return {name + ".c", name + "_runtime.c", name + "_weights.S"};
}

std::vector<std::string> build_objects(const CompiledModel& m, const fs::path& dir,
                                       const ir::Target& target, bool pic, CCompiler cc) {
  const std::string& n = m.plan.name;
  if (target.is_cuda()) {
    // The device code by nvcc; the weights' assembler file by the host's C compiler.
    std::vector<std::string> objects = {
        toolchain::compile_cuda_object(dir.string(), n + ".cu", target, pic)};
    for (const std::string& o :
         toolchain::compile_objects(dir.string(), {n + "_weights.S"}, target, pic))
      objects.push_back(o);
    return objects;
  }
  const std::vector<std::string> sources = c_library_sources(n);
  if (cc == CCompiler::System)
    return toolchain::compile_objects(dir.string(), sources, target, pic);
  return toolchain::compile_objects_in_process(dir.string(), sources, target, pic);
}

}  // namespace

std::vector<std::string> write_output(const CompiledModel& m, EmitKind kind,
                                      const std::string& out_path, const ir::Target& target,
                                      CCompiler cc) {
  const std::string& n = m.plan.name;
  const fs::path out(out_path);
  std::vector<std::pair<fs::path, fs::path>> moves;
  switch (kind) {
    case EmitKind::Source: {
      std::error_code ec;
      fs::create_directories(out, ec);
      if (!fs::is_directory(out)) throw Diagnostic({out_path}, "cannot create the output folder");
      StagingDir stage(out);
      write_files(m.files, stage.path());
      for (const codegen::GeneratedFile& f : m.files)
        moves.emplace_back(stage.path() / f.name, out / f.name);
      commit(moves);
      break;
    }
    case EmitKind::Header: {
      const fs::path target_file = out.extension() == ".h" ? out : out / (n + ".h");
      StagingDir stage(target_file.parent_path());
      write_files({codegen::emit_header(m.plan, target)}, stage.path());
      moves.emplace_back(stage.path() / (n + ".h"), target_file);
      commit(moves);
      break;
    }
    case EmitKind::Lib:
    case EmitKind::Obj: {
      const fs::path dir = out.parent_path();
      StagingDir stage(dir);
      write_files(m.files, stage.path());
      const std::vector<std::string> objects = build_objects(m, stage.path(), target, false, cc);
      const std::string product = kind == EmitKind::Lib ? "lib" + n + ".a" : n + ".o.tmp";
      if (kind == EmitKind::Lib)
        toolchain::make_archive(stage.path().string(), objects, product);
      else
        toolchain::link_relocatable(stage.path().string(), objects, product);
      moves.emplace_back(stage.path() / product, out);
      moves.emplace_back(stage.path() / (n + ".h"),
                         (dir.empty() ? fs::path(".") : dir) / (n + ".h"));
      commit(moves);
      break;
    }
  }
  std::vector<std::string> written;
  for (const auto& mv : moves) written.push_back(mv.second.string());
  return written;
}

namespace {

// The optimisation an emulated library is worth: -O1 where the kernels' work makes up for
// its longer compile, -Og where it does not. The work of one run: the floating-point
// operations of every call, and an operation for each element of the inputs, outputs and
// workspace (a copy or a reindexing has no arithmetic). -O1 saved about 2.5 ns an operation
// (ResNet-50, its two runs in the emulator: forward and reverse) and cost about 0.4 s more
// to compile; at 2^25 (34 M) operations -Og's slower runs cost about 0.16 s of that.
toolchain::EmulatedCode emulated_code_for(const codegen::ModelPlan& plan) {
  double work = 0;
  for (const codegen::Call& c : plan.calls) work += plan.kernels[c.kernel].flops;
  double bytes = static_cast<double>(plan.workspace_bytes);
  for (const codegen::TensorInfo& t : plan.inputs) bytes += static_cast<double>(t.type.bytes());
  for (const codegen::TensorInfo& t : plan.outputs) bytes += static_cast<double>(t.type.bytes());
  work += bytes / 4;
  return work < 0x1p25 ? toolchain::EmulatedCode::Quick : toolchain::EmulatedCode::Fast;
}

}  // namespace

std::string build_shared_library(const CompiledModel& m, const std::string& dir,
                                 const ir::Target& target, CCompiler cc) {
  write_files(m.files, dir);
  if (target.is_cuda()) {
    const std::string& n = m.plan.name;
    const codegen::GeneratedFile harness = codegen::hosted_harness(m.plan, m.profiled);
    std::ofstream(fs::path(dir) / harness.name) << harness.contents;
    const std::string so = "lib" + n + ".so";
    if (target.runs_here) {
      std::vector<std::string> objects = {
          toolchain::compile_cuda_object(dir, n + ".cu", target, true),
          toolchain::compile_cuda_object(dir, harness.name, target, true)};
      for (const std::string& o : toolchain::compile_objects(dir, {n + "_weights.S"}, target, true))
        objects.push_back(o);
      toolchain::link_cuda_shared_library(dir, objects, so);
    } else {
      toolchain::build_emulated_library(dir, {n + ".cu", harness.name, n + "_weights.S"}, so,
                                        codegen::runtime_file("cuda_runtime.h"),
                                        emulated_code_for(m.plan));
    }
    return (fs::path(dir) / so).string();
  }
  const std::vector<std::string> objects = build_objects(m, dir, target, true, cc);
  const std::string so = "lib" + m.plan.name + ".so";
  toolchain::link_shared(dir, objects, so);
  return (fs::path(dir) / so).string();
}

toolchain::SanitizedRun run_sanitized_library(const CompiledModel& m, const std::string& dir,
                                              const ir::Target& target,
                                              const std::vector<std::vector<uint8_t>>& inputs,
                                              const std::vector<size_t>& output_bytes,
                                              int timeout_seconds) {
  TLMC_ASSERT(!target.is_cuda(), "a CUDA target's library is not run under sanitizers");
  write_files(m.files, dir);
  const std::string& n = m.plan.name;
  return toolchain::run_sanitized(dir, c_library_sources(n), n + ".h", n, target, inputs,
                                  output_bytes, timeout_seconds);
}

std::string hosted_entry(const CompiledModel& m, const ir::Target& target) {
  return m.plan.name + (target.is_cuda() ? "_hosted" : "");
}

std::string depfile_text(const std::string& output, const std::vector<std::string>& inputs) {
  auto escape = [](const std::string& s) {
    std::string out;
    for (char c : s) {
      if (c == ' ' || c == '#' || c == ':') out += '\\';
      if (c == '$') out += '$';
      out += c;
    }
    return out;
  };
  std::string text = escape(output) + ":";
  for (const std::string& i : inputs) text += " " + escape(i);
  return text + "\n";
}

}  // namespace tlmc::driver
