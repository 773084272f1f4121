// The compile pipeline's step "generate": each kernel of the chosen layout plan lowered
// with its schedule (and shown by --dump te, sketch, precision and loops), and the model's
// C emitted from them.
#pragma once

#include <map>
#include <vector>

#include "driver/compile.h"
#include "driver/layout_plans.h"
#include "scheduler/decision.h"

namespace tlmc::driver {

// The kernels of a layout plan: its distinct subgraphs, numbered as they first occur.
struct PlanKernels {
  std::map<int, int> kernel_of;  // distinct subgraph -> kernel
  std::vector<int> distinct_of;  // kernel -> distinct subgraph
};

PlanKernels plan_kernels(const LayoutPlan& plan);

// Lowers each kernel of `plan` with its schedule and generates the model's C into `m` (its
// plan and files); says how the kernels of a bf16 build compute.
void generate(const CompileOptions& o, const LayoutPlan& plan,
              const std::vector<Distinct>& distinct, const PlanKernels& plan_kernels,
              const std::vector<std::vector<scheduler::Decision>>& schedules, CompiledModel& m);

}  // namespace tlmc::driver
