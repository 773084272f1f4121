#include "driver/generate.h"

#include <ostream>
#include <string>

#include "codegen/emit_c.h"
#include "driver/pipeline.h"
#include "frontend/reduced_precision.h"
#include "ir/te_text.h"
#include "scheduler/lower_schedule.h"
#include "scheduler/sketch.h"
#include "scheduler/sketch_rules.h"
#include "scheduler/tile_product.h"
#include "tune/measure_task.h"

namespace tlmc::driver {

PlanKernels plan_kernels(const LayoutPlan& plan) {
  PlanKernels k;
  for (const Occurrence& c : plan.occurrences)
    k.kernel_of.emplace(c.distinct, static_cast<int>(k.kernel_of.size()));
  k.distinct_of.resize(k.kernel_of.size());
  for (const auto& [d, i] : k.kernel_of) k.distinct_of[static_cast<size_t>(i)] = d;
  return k;
}

namespace {

// Why a bf16 build's kernel computes its products in float32: " (Conv 'x': a window over 3
// input channels ...; ...)", or empty where it has no product.
std::string float32_reasons(const CompileOptions& o, const LayoutPlan& plan, int distinct) {
  std::string out;
  for (const Occurrence& c : plan.occurrences) {
    if (c.distinct != distinct) continue;
    for (int node : c.nodes) {
      const ir::Node& n = plan.graph.nodes[static_cast<size_t>(node)];
      const std::string why = frontend::float32_reason(plan.graph, n, o.precision);
      if (!why.empty()) out += (out.empty() ? " (" : "; ") + n.describe() + ": " + why;
    }
    break;
  }
  return out.empty() ? out : out + ")";
}

}  // namespace

void generate(const CompileOptions& o, const LayoutPlan& plan,
              const std::vector<Distinct>& distinct, const PlanKernels& plan_kernels,
              const std::vector<std::vector<scheduler::Decision>>& schedules, CompiledModel& m) {
  std::ostream* dump = o.dump_stream;
  std::vector<codegen::KernelInfo> kernels;
  int unit_kernels = 0, widened_kernels = 0, float_kernels = 0;  // by how they compute
  {
    PassTimer t(o, "lower schedules");
    for (size_t k = 0; k < plan_kernels.distinct_of.size(); ++k) {
      const Distinct& d = distinct[static_cast<size_t>(plan_kernels.distinct_of[k])];
      const std::vector<scheduler::Decision>& schedule = schedules.at(k);
      const ir::TeProgram& program = d.lowered.program;
      const scheduler::ScheduleState state = scheduler::apply_schedule(program, schedule);
      ir::LoopProgram loops =
          scheduler::lower_schedule(state, m.graph.name + "_k" + std::to_string(k));
      if (dump && wants(o, "te"))
        *dump << "# kernel " << k << " (workload " << ir::workload_key(program) << ")\n"
              << ir::te_str(program);
      if (dump && wants(o, "te-text"))
        *dump << "# kernel " << k << " (workload " << ir::workload_key(program) << ")\n"
              << ir::te_to_text(program);
      if (dump && wants(o, "sketch")) {
        for (const scheduler::Sketch& sketch : scheduler::generate_sketches(program, o.target)) {
          *dump << "# kernel " << k << " sketch " << sketch.name() << "\n";
          for (const scheduler::Space& s : sketch.spaces())
            *dump << scheduler::space_kind_name(s.kind) << " " << s.stage << " " << s.axis << "\n";
        }
      }
      const scheduler::KernelPrecision precision = scheduler::kernel_precision(state, o.target);
      if (dump && wants(o, "precision"))
        *dump << "# kernel " << k << " (workload " << ir::workload_key(program)
              << "): " << precision.text
              << (precision.by_unit + precision.widened == 0 && o.bf16
                      ? float32_reasons(o, plan, plan_kernels.distinct_of[k])
                      : "")
              << "\n";
      (precision.by_unit > 0   ? unit_kernels
       : precision.widened > 0 ? widened_kernels
                               : float_kernels) += 1;
      if (dump && wants(o, "loops"))
        *dump << "# kernel " << k << " schedule:\n"
              << scheduler::schedule_str(schedule) << ir::loop_str(loops);
      kernels.push_back(codegen::KernelInfo{std::move(loops), ir::workload_key(program),
                                            scheduler::schedule_str(schedule),
                                            tune::program_flops(program)});
    }
  }
  // Nothing about a bf16 build (or a bfloat16 model's) is silent: how many kernels the unit
  // computes.
  const char* unit = o.target.bf16 == ir::Bf16Unit::Amx ? "AMX tiles"
                     : o.target.bf16 == ir::Bf16Unit::Avx512Bf16
                         ? "vdpbf16ps"
                         : "a bf16 unit (the target has none)";
  if ((o.bf16 || unit_kernels + widened_kernels > 0) && o.progress_stream)
    *o.progress_stream << "tlmc: bf16: " << unit_kernels << " of " << kernels.size()
                       << " kernels compute their products by " << unit << ", " << widened_kernels
                       << " by loops widening bfloat16, " << float_kernels
                       << " in float32 alone (--dump precision lists them, with the reasons)\n";
  std::vector<codegen::CompiledSubgraph> subgraphs;
  for (const Occurrence& c : plan.occurrences)
    subgraphs.push_back(
        codegen::CompiledSubgraph{c.nodes, plan_kernels.kernel_of.at(c.distinct), c.params});
  PassTimer t(o, "plan and generate C");
  m.plan =
      codegen::plan_model(plan.graph, plan.partition.storage_of, subgraphs, std::move(kernels));
  m.files = codegen::emit_c(m.plan, codegen::CodegenOptions{o.target, o.threads, o.profile});
  m.profiled = o.profile;
}

}  // namespace tlmc::driver
