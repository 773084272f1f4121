#include "toolchain/clang_in_process.h"

#include <mutex>
#include <sstream>

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Driver/Compilation.h"
#include "clang/Driver/Driver.h"
#include "clang/Driver/Job.h"
#include "clang/Driver/Tool.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"

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
  InProcessObject out;
  llvm::raw_string_ostream diag_stream(out.diagnostics);
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> diag_options = new clang::DiagnosticOptions();
  CountingPrinter printer(diag_stream, diag_options.get());
  llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> diags = new clang::DiagnosticsEngine(
      new clang::DiagnosticIDs(), diag_options, &printer, /*ShouldOwnClient=*/false);

  // The source as a file of an in-memory file system laid over the real one (headers).
  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  memory->addFile(kSourcePath, 0, llvm::MemoryBuffer::getMemBuffer(source, kSourcePath, true));
  auto files =
      llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  files->pushOverlay(memory);

  // The driver turns driver flags (-O3, -march) into the one cc1 job's arguments.
  std::vector<const char*> argv = {kClangPath, "-c", kSourcePath, "-resource-dir", kResourceDir};
  for (const std::string& f : flags) argv.push_back(f.c_str());
  clang::driver::Driver driver(kClangPath, llvm::sys::getDefaultTargetTriple(), *diags, "tlmc",
                               files);
  std::unique_ptr<clang::driver::Compilation> compilation(driver.BuildCompilation(argv));
  if (!compilation || diags->hasErrorOccurred()) return out;
  const clang::driver::JobList& jobs = compilation->getJobs();
  if (jobs.size() != 1 || !llvm::isa<clang::driver::Command>(*jobs.begin())) {
    diag_stream << "tlmc: the clang driver planned " << jobs.size() << " jobs, not one\n";
    return out;
  }
  const llvm::opt::ArgStringList& cc1 =
      llvm::cast<clang::driver::Command>(*jobs.begin()).getArguments();

  auto invocation = std::make_shared<clang::CompilerInvocation>();
  if (!clang::CompilerInvocation::CreateFromArgs(*invocation, cc1, *diags, kClangPath) ||
      diags->hasErrorOccurred())
    return out;
  // The driver asks cc1 not to free its data (the process would exit right after); here
  // that would leak every compilation.
  invocation->getFrontendOpts().DisableFree = false;
  invocation->getCodeGenOpts().DisableFree = false;

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

}  // namespace tlmc::toolchain
