#include "driver/subcommand_words.h"

#include <iostream>
#include <stdexcept>

namespace tlmc::driver {

namespace po = boost::program_options;

std::vector<std::string> parse_subcommand(const std::vector<std::string>& args,
                                          po::options_description& options, po::variables_map& vm) {
  options.add_options()("help,h", "")("words", po::value<std::vector<std::string>>());
  po::positional_options_description pos;
  pos.add("words", -1);
  try {
    po::store(po::command_line_parser(args).options(options).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(e.what());
  }
  return vm.count("words") ? vm["words"].as<std::vector<std::string>>()
                           : std::vector<std::string>{};
}

std::optional<int> usage_asked(const po::variables_map& vm, const std::vector<std::string>& words,
                               const char* usage) {
  if (!vm.count("help") && !words.empty()) return std::nullopt;
  std::cout << usage;
  return vm.count("help") ? 0 : 2;
}

}  // namespace tlmc::driver
