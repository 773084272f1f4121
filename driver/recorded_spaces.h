// The spaces a workload's tuning records were measured in, and each record's point of them:
// how fine-tuning and the speedup model's training read measured schedules back.
#pragma once

#include <optional>
#include <vector>

#include "ir/target.h"
#include "ir/te.h"
#include "scheduler/sketch.h"
#include "scheduler/tuning_db.h"

namespace tlmc::driver {

// The spaces, and each record's point of them (nullopt where its schedule is not one: a
// decision list, spaces of another tlmc, a value a space no longer lists).
struct RecordedSpaces {
  ir::Target target;  // the target the spaces are of (with the bf16 unit taken, below)
  scheduler::Sketches sketches;
  std::vector<std::optional<scheduler::SpacePoint>> points;  // [record]
  size_t count() const;                                      // records that are points
};

// A descriptor does not name the CPU's bf16 unit (ir/target.h: float32 kernels do not
// depend on it), and a program with bfloat16 products has other spaces on a CPU with AMX
// (the tile unit's) than on one with AVX512_BF16 alone: the unit taken is the one under
// which most of the records are points of the spaces.
RecordedSpaces recorded_spaces(const ir::TeProgram& program, ir::Target target,
                               const std::vector<scheduler::TuningRecord>& records);

}  // namespace tlmc::driver
