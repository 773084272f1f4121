#include "toolchain/loaded_object.h"

#include <mutex>

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"

namespace tlmc::toolchain {
namespace {

bool failed(llvm::Error e, std::string* error) {
  if (!e) return false;
  *error = llvm::toString(std::move(e));
  return true;
}

}  // namespace

struct LoadedObject::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

LoadedObject::LoadedObject() : impl_(std::make_unique<Impl>()) {}
LoadedObject::~LoadedObject() = default;

std::unique_ptr<LoadedObject> LoadedObject::load(const std::string& object, std::string* error) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) return failed(builder.takeError(), error), nullptr;
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*builder)).create();
  if (!jit) return failed(jit.takeError(), error), nullptr;
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process) return failed(process.takeError(), error), nullptr;
  (*jit)->getMainJITDylib().addGenerator(std::move(*process));
  if (failed((*jit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, "candidate.o")),
             error))
    return nullptr;
  std::unique_ptr<LoadedObject> out(new LoadedObject());
  out->impl_->jit = std::move(*jit);
  return out;
}

void* LoadedObject::symbol(const std::string& name, std::string* error) {
  auto s = impl_->jit->lookup(name);
  if (!s) return failed(s.takeError(), error), nullptr;
  // The JIT hands out addresses as integers.
  return reinterpret_cast<void*>(  // NOLINT(performance-no-int-to-ptr)
      static_cast<uintptr_t>(s->getAddress()));
}

}  // namespace tlmc::toolchain
