// Tuning records as `tlmc db import` reads them (JSON lines), on any text: imported or
// refused with a Diagnostic. Each record imported has its workload read (or refused with
// TeTextError) and its schedule read against it, as a build that looks it up does.
#include <cstdint>
#include <sstream>
#include <string>

#include "ir/diagnostic.h"
#include "ir/target.h"
#include "ir/te_text.h"
#include "scheduler/sketch.h"
#include "scheduler/tuning_records_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tlmc::ir::Target target = *tlmc::ir::parse_target("x86-64-avx512");
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::vector<tlmc::scheduler::TuningRecord> records;
  try {
    records = tlmc::scheduler::import_records(in, "fuzz.jsonl");
  } catch (const tlmc::Diagnostic&) {
    return 0;
  }
  for (const tlmc::scheduler::TuningRecord& r : records) {
    try {
      const tlmc::ir::TeProgram program = tlmc::ir::te_from_text(r.workload);
      tlmc::scheduler::schedule_from_record(r.schedule, program, target);
    } catch (const tlmc::ir::TeTextError&) {
    }
  }
  return 0;
}
