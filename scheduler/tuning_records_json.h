// Tuning records as JSON lines (`tlmc db export|import`), versioned: a header line
// {"format": "tlmc-tuning-records", "version": 1}, then one record an object a line.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "scheduler/tuning_db.h"

namespace tlmc::scheduler {

void export_records(std::ostream& out, const std::vector<TuningRecord>& records);
// The inverse; throws Diagnostic (file:line:col) on a malformed line, a missing field, or
// another format or a newer version.
std::vector<TuningRecord> import_records(std::istream& in, const std::string& file_name);

}  // namespace tlmc::scheduler
