// The command line of a `tlmc db` or `tlmc lm` subcommand: its options into `vm` (with "help"
// and the positional "words" added to `options`), its words returned; and its usage text.
#pragma once

#include <boost/program_options.hpp>
#include <optional>
#include <string>
#include <vector>

namespace tlmc::driver {

// std::invalid_argument for an unknown or malformed option.
std::vector<std::string> parse_subcommand(const std::vector<std::string>& args,
                                          boost::program_options::options_description& options,
                                          boost::program_options::variables_map& vm);

// With --help, or without a word: prints `usage` to stdout and returns the exit status (0
// when asked for, 2 when no command was given); nullopt otherwise.
std::optional<int> usage_asked(const boost::program_options::variables_map& vm,
                               const std::vector<std::string>& words, const char* usage);

}  // namespace tlmc::driver
