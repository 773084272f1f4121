#include "toolchain/assemble_in_process.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "ir/diagnostic.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/MC/MCAsmBackend.h"
#include "llvm/MC/MCAsmInfo.h"
#include "llvm/MC/MCCodeEmitter.h"
#include "llvm/MC/MCContext.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCObjectFileInfo.h"
#include "llvm/MC/MCObjectWriter.h"
#include "llvm/MC/MCParser/MCAsmParser.h"
#include "llvm/MC/MCParser/MCTargetAsmParser.h"
#include "llvm/MC/MCRegisterInfo.h"
#include "llvm/MC/MCStreamer.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/MCTargetOptions.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/Host.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

namespace tlmc::toolchain {

InProcessObject assemble_in_process(const std::string& text, const std::string& include_dir) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmParser();
  llvm::InitializeNativeTargetAsmPrinter();
  InProcessObject out;
  llvm::raw_string_ostream diag(out.diagnostics);
  const llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple.getTriple(), error);
  if (!target) {
    diag << "no target for " << triple.getTriple() << ": " << error << "\n";
    return out;
  }
  llvm::SourceMgr sources;
  sources.setIncludeDirs({include_dir});
  sources.setDiagHandler(
      [](const llvm::SMDiagnostic& d, void* stream) {
        d.print("tlmc", *static_cast<llvm::raw_string_ostream*>(stream));
      },
      &diag);
  sources.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "weights.S"),
                             llvm::SMLoc());

  const llvm::MCTargetOptions options;
  std::unique_ptr<llvm::MCRegisterInfo> registers(target->createMCRegInfo(triple.getTriple()));
  std::unique_ptr<llvm::MCAsmInfo> asm_info(
      target->createMCAsmInfo(*registers, triple.getTriple(), options));
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple.getTriple(), "", ""));
  std::unique_ptr<llvm::MCInstrInfo> instructions(target->createMCInstrInfo());
  llvm::MCContext context(triple, asm_info.get(), registers.get(), subtarget.get(), &sources,
                          &options);
  std::unique_ptr<llvm::MCObjectFileInfo> file_info(
      target->createMCObjectFileInfo(context, /*PIC=*/false));
  context.setObjectFileInfo(file_info.get());

  llvm::SmallVector<char, 0> object;
  {
    llvm::raw_svector_ostream object_stream(object);
    std::unique_ptr<llvm::MCAsmBackend> backend(
        target->createMCAsmBackend(*subtarget, *registers, options));
    if (!backend) {
      diag << "no assembler backend for " << triple.getTriple() << "\n";
      return out;
    }
    std::unique_ptr<llvm::MCObjectWriter> writer = backend->createObjectWriter(object_stream);
    std::unique_ptr<llvm::MCCodeEmitter> emitter(
        target->createMCCodeEmitter(*instructions, *registers, context));
    std::unique_ptr<llvm::MCStreamer> streamer(target->createMCObjectStreamer(
        triple, context, std::move(backend), std::move(writer), std::move(emitter), *subtarget,
        /*RelaxAll=*/false, /*IncrementalLinkerCompatible=*/false,
        /*DWARFMustBeAtTheEnd=*/false));
    std::unique_ptr<llvm::MCAsmParser> parser(
        llvm::createMCAsmParser(sources, context, *streamer, *asm_info));
    std::unique_ptr<llvm::MCTargetAsmParser> target_parser(
        target->createMCAsmParser(*subtarget, *parser, *instructions, options));
    if (!target_parser) {
      diag << "no assembler parser for " << triple.getTriple() << "\n";
      return out;
    }
    parser->setTargetParser(*target_parser);
    out.ok = !parser->Run(/*NoInitialTextSection=*/false);
  }  // the streamer's destruction writes the object
  diag.flush();
  if (out.ok) out.object.assign(object.data(), object.size());
  return out;
}

std::vector<std::string> compile_objects_in_process(const std::string& dir,
                                                    const std::vector<std::string>& sources,
                                                    const ir::Target& target, bool pic) {
  std::vector<std::string> objects;
  std::vector<std::string> flags = generated_code_flags(target);
  if (pic) flags.emplace_back("-fPIC");
  flags.push_back("-I" + dir);  // the generated headers beside the sources
  for (const std::string& src : sources) {
    const std::filesystem::path folder(dir);
    std::ifstream in(folder / src, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) throw InternalError("cannot read the generated " + (folder / src).string());
    const bool assembler = src.size() > 2 && src.compare(src.size() - 2, 2, ".S") == 0;
    const InProcessObject o =
        assembler ? assemble_in_process(text.str(), dir) : compile_c_in_process(text.str(), flags);
    if (!o.ok) {
      std::string message = "compiling the generated ";
      message.append(src).append(" in process failed; this is a bug in tlmc, please report it.\n");
      throw InternalError(message.append(o.diagnostics));
    }
    const std::string obj = src.substr(0, src.rfind('.')) + ".o";
    std::ofstream f(folder / obj, std::ios::binary);
    f.write(o.object.data(), static_cast<std::streamsize>(o.object.size()));
    if (!f.flush()) throw InternalError("cannot write " + (folder / obj).string());
    objects.push_back(obj);
  }
  return objects;
}

}  // namespace tlmc::toolchain
