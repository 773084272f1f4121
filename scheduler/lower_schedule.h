// Applies a schedule: turns a tensor-expression program and the state its decisions built
// into a loop nest. Needs a state built by apply_decision (so every decision was checked);
// guarantees a program that passes verify_loops, with the subgraph's inputs and outputs as
// parameters and intermediates at the root in scratch memory.
#pragma once

#include <string>

#include "ir/loop.h"
#include "scheduler/schedule_state.h"

namespace tlmc::scheduler {

ir::LoopProgram lower_schedule(const ScheduleState& st, const std::string& kernel_name);

}  // namespace tlmc::scheduler
