// `tlmc db list|export|import|prune|check`: reading and keeping the tuning database
// (scheduler/tuning_db.h) from the command line.
#pragma once

#include <string>
#include <vector>

namespace tlmc::driver {

// args: what follows "db" on the command line. Returns the exit status; throws Diagnostic
// for bad input (a malformed records file, a database that is not one) and
// std::invalid_argument for bad usage.
int run_db_command(const std::vector<std::string>& args);

}  // namespace tlmc::driver
