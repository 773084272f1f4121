// One kernel as a self-contained C translation unit, for measuring it: the runtime (symbols
// prefixed tlmc_measure_rt_), the kernel, and three exported functions:
//   void tlmc_measure_run(void* const* params, char* scratch);  /* inputs, then outputs */
//   void tlmc_measure_threads(int n);    /* threads of the parallel loops */
//   void tlmc_measure_shutdown(void);    /* joins the pool's threads, before unloading */
// It includes only system headers, so it compiles from memory.
#pragma once

#include <string>

#include "ir/loop.h"
#include "ir/target.h"

namespace tlmc::codegen {

std::string emit_measurement_source(const ir::LoopProgram& kernel, const ir::Target& target);

}  // namespace tlmc::codegen
