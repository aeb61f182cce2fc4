// The mpisentry command line:
//   mpisentry [options] -n N ./app args...
//   mpisentry [options] -- LAUNCHER ARGS...
#pragma once

#include "config/settings.hpp"

#include <span>
#include <string>
#include <vector>

namespace mpisentry::launcher {

// One setting given on the command line, applied after the environment.
struct OptionSetting {
  std::string key;     // config key: "DEADLOCK-TIMEOUT", "CHECK"
  std::string value;   // "10s", "GLOBAL:DEADLOCK:POTENTIAL ON"
  std::string option;  // as written, for messages: "--deadlock-timeout"
};

struct Arguments {
  bool help = false;
  bool version = false;
  std::string config_file;              // --config
  std::vector<OptionSetting> settings;  // in command-line order
  std::string ranks;                    // -n N, a positive number
  std::vector<std::string> program;     // after -n N: the program and its arguments
  std::vector<std::string> launcher_line;  // after --: run as given
  std::vector<config::Problem> errors;  // each names the option it is about
};

// `words` are the arguments after the command's own name. Values of settings
// are checked later, with the rest of the config (resolve_settings in job.hpp).
Arguments parse_arguments(std::span<const std::string> words);

// --help: the usage and every option, with the help text of flags.def.
std::string usage();

}  // namespace mpisentry::launcher
