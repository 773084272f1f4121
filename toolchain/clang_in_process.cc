#include "toolchain/clang_in_process.h"

#include <mutex>
#include <optional>
#include <sstream>

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/Version.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Driver/Compilation.h"
#include "clang/Driver/Driver.h"
#include "clang/Driver/Job.h"
#include "clang/Driver/Tool.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/PreprocessorOutputOptions.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Frontend/Utils.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "toolchain/object_cache.h"

namespace tlmc::toolchain {
namespace {

// The driver derives its installation (resource folder, GCC detection) from this path; it
// is never run.
constexpr const char* kClangPath = TLMC_CLANG_PATH;
constexpr const char* kResourceDir = TLMC_CLANG_RESOURCE_DIR;
// The in-memory source's name; it is what the object's file symbol says.
constexpr const char* kSourcePath = "/tlmc-in-memory/kernel.c";

void initialise_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

// Counts errors while printing every diagnostic into a string.
class CountingPrinter : public clang::TextDiagnosticPrinter {
 public:
  using clang::TextDiagnosticPrinter::TextDiagnosticPrinter;
  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic& info) override {
    if (level >= clang::DiagnosticsEngine::Error) ++errors;
    clang::TextDiagnosticPrinter::HandleDiagnostic(level, info);
  }
  int errors = 0;
};

// The source as a file of an in-memory file system laid over the real one (headers).
llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem> files_with(const std::string& source) {
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  memory->addFile(kSourcePath, 0, llvm::MemoryBuffer::getMemBuffer(source, kSourcePath, true));
  auto files =
      llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  files->pushOverlay(memory);
  return files;
}

// The cc1 invocation the clang driver makes of driver flags (-O3, -march) for the in-memory
// source; nullptr when they are refused (the reasons go to `diags`, or to `notes`).
std::shared_ptr<clang::CompilerInvocation> invocation_of(
    const std::vector<std::string>& flags, clang::DiagnosticsEngine& diags,
    const llvm::IntrusiveRefCntPtr<llvm::vfs::OverlayFileSystem>& files, llvm::raw_ostream& notes) {
  std::vector<const char*> argv = {kClangPath, "-c", kSourcePath, "-resource-dir", kResourceDir};
  for (const std::string& f : flags) argv.push_back(f.c_str());
  clang::driver::Driver driver(kClangPath, llvm::sys::getDefaultTargetTriple(), diags, "tlmc",
                               files);
  std::unique_ptr<clang::driver::Compilation> compilation(driver.BuildCompilation(argv));
  if (!compilation || diags.hasErrorOccurred()) return nullptr;
  const clang::driver::JobList& jobs = compilation->getJobs();
  if (jobs.size() != 1 || !llvm::isa<clang::driver::Command>(*jobs.begin())) {
    notes << "tlmc: the clang driver planned " << jobs.size() << " jobs, not one\n";
    return nullptr;
  }
  const llvm::opt::ArgStringList& cc1 =
      llvm::cast<clang::driver::Command>(*jobs.begin()).getArguments();
  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*invocation, cc1, diags, kClangPath) ||
      diags.hasErrorOccurred())
    return nullptr;
  // The driver asks cc1 not to free its data (the process would exit right after); here
  // that would leak every compilation.
  invocation->getFrontendOpts().DisableFree = false;
  invocation->getCodeGenOpts().DisableFree = false;
  return invocation;
}

// Compiles `source` with `flags`: the object, or Clang's reasons.
InProcessObject compile(const std::string& source, const std::vector<std::string>& flags) {
  InProcessObject out;
  llvm::raw_string_ostream diag_stream(out.diagnostics);
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> diag_options = new clang::DiagnosticOptions();
  CountingPrinter printer(diag_stream, diag_options.get());
  llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> diags = new clang::DiagnosticsEngine(
      new clang::DiagnosticIDs(), diag_options, &printer, /*ShouldOwnClient=*/false);
  const auto files = files_with(source);
  std::shared_ptr<clang::CompilerInvocation> invocation =
      invocation_of(flags, *diags, files, diag_stream);
  if (!invocation) return out;

  llvm::SmallVector<char, 0> object;
  {
    clang::CompilerInstance compiler;
    compiler.setInvocation(std::move(invocation));
    compiler.createDiagnostics(&printer, /*ShouldOwnClient=*/false);
    compiler.setVerboseOutputStream(diag_stream);
    compiler.createFileManager(files);
    compiler.setOutputStream(std::make_unique<llvm::raw_svector_ostream>(object));
    clang::EmitObjAction action;
    out.ok = compiler.ExecuteAction(action) && printer.errors == 0;
  }  // the compiler's destruction flushes the object stream
  diag_stream.flush();
  if (out.ok) out.object.assign(object.data(), object.size());
  return out;
}

// A stream that only digests what is written to it.
class DigestStream : public llvm::raw_ostream {
 public:
  ~DigestStream() override { flush(); }
  std::string hex() {
    flush();
    return llvm::toHex(sha_.final(), /*LowerCase=*/true);
  }

 private:
  void write_impl(const char* data, size_t bytes) override {
    sha_.update(llvm::StringRef(data, bytes));
    written_ += bytes;
  }
  uint64_t current_pos() const override { return written_; }
  llvm::SHA256 sha_;
  uint64_t written_ = 0;
};

// Prints the preprocessor's output, as -E -P does: without line markers, so that the folder
// a header was read from is not part of it.
class PrintPreprocessed : public clang::PreprocessorFrontendAction {
 public:
  explicit PrintPreprocessed(llvm::raw_ostream& out) : out_(out) {}

 private:
  void ExecuteAction() override {
    clang::CompilerInstance& compiler = getCompilerInstance();
    clang::PreprocessorOutputOptions o = compiler.getPreprocessorOutputOpts();
    o.ShowCPP = 1;
    o.ShowLineMarkers = 0;
    clang::DoPrintPreprocessedInput(compiler.getPreprocessor(), &out_, o);
  }
  llvm::raw_ostream& out_;
};

// The object cache's key of a compilation: a digest of everything the object depends on.
// That is the preprocessed source (the source and every header it reads, system headers
// included), the flags but the include folders (the preprocessed text holds what was read
// through them), Clang's version and the default triple; and the host's CPU, should a
// flag ever ask for the host's own (generated_code_flags does not). nullopt when the
// preprocessor fails (the compilation then reports why), and for flags that make the object
// depend on more than that text: debug information, profiling and sanitizers, which record
// lines and the folders files were read from.
std::optional<std::string> compilation_key(const std::string& source,
                                           const std::vector<std::string>& flags) {
  for (const std::string& f : flags)
    for (const char* unkeyed : {"-g", "-fprofile", "-fcoverage", "-fsanitize"})
      if (f.rfind(unkeyed, 0) == 0) return std::nullopt;
  clang::IgnoringDiagConsumer quiet;  // the compilation reports what is wrong
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> diag_options = new clang::DiagnosticOptions();
  llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> diags = new clang::DiagnosticsEngine(
      new clang::DiagnosticIDs(), diag_options, &quiet, /*ShouldOwnClient=*/false);
  const auto files = files_with(source);
  std::string notes;
  llvm::raw_string_ostream notes_stream(notes);
  std::shared_ptr<clang::CompilerInvocation> invocation =
      invocation_of(flags, *diags, files, notes_stream);
  if (!invocation) return std::nullopt;
  DigestStream digest;
  const char kSeparator = '\0';
  digest << "tlmc object cache 1" << kSeparator << clang::getClangFullVersion() << kSeparator
         << llvm::sys::getDefaultTargetTriple() << kSeparator;
  for (const std::string& f : flags) {
    if (f.rfind("-I", 0) == 0) continue;
    digest << f << kSeparator;
    if (f.find("native") != std::string::npos) digest << llvm::sys::getHostCPUName() << kSeparator;
  }
  {
    clang::CompilerInstance compiler;
    compiler.setInvocation(std::move(invocation));
    compiler.createDiagnostics(&quiet, /*ShouldOwnClient=*/false);
    compiler.createFileManager(files);
    PrintPreprocessed action(digest);
    if (!compiler.ExecuteAction(action) || compiler.getDiagnostics().hasErrorOccurred())
      return std::nullopt;
  }
  return digest.hex();
}

}  // namespace

std::vector<std::string> generated_code_flags(const ir::Target& target) {
  std::vector<std::string> flags = {"-std=c11", "-O3"};
  std::istringstream march(target.cc_flags());
  for (std::string f; march >> f;) flags.push_back(f);
  flags.insert(flags.end(), {"-fno-math-errno", "-ffp-contract=fast"});
  return flags;
}

InProcessObject compile_c_in_process(const std::string& source,
                                     const std::vector<std::string>& flags) {
  initialise_llvm();
  const std::optional<ObjectCache> cache = object_cache_from_environment();
  std::optional<std::string> key;
  if (cache) {
    key = compilation_key(source, flags);
    if (key)
      if (std::optional<std::string> object = load_cached_object(*cache, *key)) {
        InProcessObject hit;
        hit.ok = true;
        hit.object = std::move(*object);
        return hit;
      }
  }
  InProcessObject out = compile(source, flags);
  // Only a clean compilation is kept: a warning's text would name the folders of its first.
  if (key && out.ok && out.diagnostics.empty()) store_cached_object(*cache, *key, out.object);
  return out;
}

}  // namespace tlmc::toolchain
