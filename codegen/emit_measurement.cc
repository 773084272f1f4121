#include "codegen/emit_measurement.h"

#include <sstream>

#include "codegen/emit_c.h"
#include "codegen/emit_kernel.h"
#include "ir/diagnostic.h"

namespace tlmc::codegen {

std::string emit_measurement_source(const ir::LoopProgram& kernel, const ir::Target& target) {
  const std::string rt = "tlmc_measure_rt_";
  std::string runtime = runtime_file("tlmc_runtime.c");
  const std::string include = "#include \"tlmc_runtime.h\"";
  const size_t at = runtime.find(include);
  TLMC_ASSERT(at != std::string::npos, "runtime source does not include its header");
  runtime.replace(at, include.size(), runtime_file("tlmc_runtime.h"));

  std::ostringstream c;
  c << "/* measurement unit of kernel " << kernel.name << " for " << target.name << " */\n";
  c << "#define TLMC_RT_PREFIX " << rt << "\n" << runtime << "\n";
  c << "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n";
  const bool tiles = uses_tile_products(kernel);
  c << kernel_preamble(target, uses_half_floats(kernel), tiles) << "\n"
    << emit_kernel(kernel, target, rt).text << "\n";
  c << "void tlmc_measure_run(void* const* params, char* scratch) {\n";
  // Without AMX a run would stop at an illegal instruction: stop it here, plainly.
  if (tiles) c << "  if (" << bf16_unusable(target, rt) << ") __builtin_trap();\n";
  c << "  " << kernel.name << "(";
  for (size_t i = 0; i < kernel.params.size(); ++i) {
    const ir::Buffer& b = kernel.buffers[static_cast<size_t>(kernel.params[i])];
    const bool in = static_cast<int>(i) < kernel.num_inputs;
    c << (i ? ", " : "") << "(" << (in ? "const " : "") << ir::dtype_c_type(b.dtype) << "*)params["
      << i << "]";
  }
  c << (kernel.params.empty() ? "" : ", ") << "scratch);\n}\n";
  c << "void tlmc_measure_threads(int n) { " << rt << "set_num_threads(n); }\n";
  c << "void tlmc_measure_shutdown(void) { " << rt << "shutdown(); }\n";
  return c.str();
}

}  // namespace tlmc::codegen
