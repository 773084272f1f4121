// The compile pipeline's step "choose schedules": the layout plan the model is built in and
// each of its kernels' schedules, from the tuning database's records (tune/schedule_choice.h)
// or -O0's rule; at -O2 and -O3 after measuring candidates on this machine (tune/tuner.h),
// and at -O3 after timing whole plans and the chosen plan's candidates in builds of the
// model (tune/confirm_in_model.h).
#pragma once

#include <vector>

#include "driver/compile.h"
#include "driver/generate.h"
#include "driver/layout_plans.h"
#include "scheduler/decision.h"
#include "scheduler/tuning_db.h"

namespace tlmc::driver {

struct BuildChoice {
  size_t plan = 0;  // of the split model's plans
  PlanKernels kernels;
  std::vector<std::vector<scheduler::Decision>> schedules;  // per kernel
  int from_records = 0;                                     // kernels scheduled from records
};

// `graph` is the model folded (and demoted, under --precision bf16), which `split` splits;
// `model_graph` the model as read, whose inputs the builds timed in the model take. A mixed
// plan chosen from the records joins split.plans.
BuildChoice choose_build(const CompileOptions& o, const ir::Graph& model_graph,
                         const ir::Graph& graph, SplitModel& split, scheduler::TuningDb& db);

// A CUDA target's -O2 and -O3 measure on the GPU of this machine when it is of the target's
// SM (ir::parse_target then takes its limits and says it runs here) and the measurements
// have a tuning database to land in; otherwise the analytic model ranks the candidates.
bool measures_on_gpu(const CompileOptions& o);

}  // namespace tlmc::driver
