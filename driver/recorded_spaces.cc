#include "driver/recorded_spaces.h"

#include <algorithm>

#include "scheduler/sketch_rules.h"

namespace tlmc::driver {
namespace {

RecordedSpaces spaces_of(const ir::TeProgram& program, const ir::Target& target,
                         const std::vector<scheduler::TuningRecord>& records) {
  RecordedSpaces out{target, scheduler::generate_sketches(program, target), {}};
  for (const scheduler::TuningRecord& r : records)
    out.points.push_back(scheduler::listed_space_point(out.sketches, r.schedule));
  return out;
}

}  // namespace

size_t RecordedSpaces::count() const {
  return static_cast<size_t>(
      std::count_if(points.begin(), points.end(), [](const auto& p) { return p.has_value(); }));
}

RecordedSpaces recorded_spaces(const ir::TeProgram& program, ir::Target target,
                               const std::vector<scheduler::TuningRecord>& records) {
  const bool bf16 =
      std::any_of(program.tensors.begin(), program.tensors.end(),
                  [](const ir::TeTensor& t) { return t.dtype == ir::DType::BFloat16; });
  if (!bf16 || target.is_cuda()) return spaces_of(program, target, records);
  std::optional<RecordedSpaces> best;
  for (ir::Bf16Unit unit : {ir::Bf16Unit::Amx, ir::Bf16Unit::Avx512Bf16, ir::Bf16Unit::None}) {
    target.bf16 = unit;
    RecordedSpaces spaces = spaces_of(program, target, records);
    if (!best || spaces.count() > best->count()) best = std::move(spaces);
    if (best->count() == records.size()) break;
  }
  return std::move(*best);
}

}  // namespace tlmc::driver
