// `tlmc lm keys|overlap|sample|pretrain|demonstrate|finetune`: the language model's pipeline from
// the command line, each command resumable (run it again after a kill and it goes on) and reporting
// its progress.
#pragma once

#include <string>
#include <vector>

namespace tlmc::driver {

// args: what follows "lm" on the command line. Returns the exit status; throws Diagnostic
// for bad input and std::invalid_argument for bad usage.
int run_lm_command(const std::vector<std::string>& args);

}  // namespace tlmc::driver
