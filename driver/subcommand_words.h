// The command line of a `tlmc db` or `tlmc lm` subcommand: its options into `vm` (with "help"
// and the positional "words" added to `options`), its words returned.
#pragma once

#include <boost/program_options.hpp>
#include <string>
#include <vector>

namespace tlmc::driver {

// std::invalid_argument for an unknown or malformed option.
std::vector<std::string> parse_subcommand(const std::vector<std::string>& args,
                                          boost::program_options::options_description& options,
                                          boost::program_options::variables_map& vm);

}  // namespace tlmc::driver
