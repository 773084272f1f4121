// Loads an ELF object into this process with LLVM's ORC JIT linker, its undefined symbols
// (libc, libm, pthreads) resolved from the process, and unloads it when destroyed. Used to
// run candidate kernels in the measurement worker without writing or linking files.
#pragma once

#include <memory>
#include <string>

namespace tlmc::toolchain {

class LoadedObject {
 public:
  // nullptr with *error set when the object cannot be linked.
  static std::unique_ptr<LoadedObject> load(const std::string& object, std::string* error);
  ~LoadedObject();
  LoadedObject(const LoadedObject&) = delete;
  LoadedObject& operator=(const LoadedObject&) = delete;
  // The address of a function or data symbol; nullptr with *error set when absent.
  void* symbol(const std::string& name, std::string* error);

 private:
  struct Impl;
  LoadedObject();
  std::unique_ptr<Impl> impl_;
};

}  // namespace tlmc::toolchain
