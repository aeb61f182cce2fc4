// The mpisentry command line:
//   mpisentry [options] -n N ./app args...
//   mpisentry [options] -- LAUNCHER ARGS...
#pragma once

#include "config/loading.hpp"
#include "launcher/command_line.hpp"
#include "config/settings.hpp"

#include <span>
#include <string>
#include <string_view>
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

// The command's forms and what each does, for --help and the man page.
struct CommandForm {
  std::string_view command;  // "mpisentry [options] -n N ./app [args...]"
  std::string_view does;
};
std::span<const CommandForm> command_forms();

// Every option and what it does: the keys of flags.def, the checks of
// checks.def (listed under --check), and the command's own.
std::vector<OptionHelp> options_help();

// What --check and the config file's CHECK lines do.
inline constexpr std::string_view kCheckPatternHelp =
    "switch checks by name, in order; '*' matches within a level, '**' across";

// The paragraphs of --help and the man page around the options.
inline constexpr std::string_view kDescription =
    "Runs an MPI job with the mpisentry deadlock checker preloaded into every rank. Settings come from the config "
    "file, then VT_<KEY> and MPISENTRY_<KEY> environment variables, then these options; each overrides the last.";
inline constexpr std::string_view kTimeSyntax =
    "TIME is a number and a unit, c (microseconds), l (milliseconds), s, m, h, d or w, added with '+' (1m+30s); a "
    "bare number is seconds.";
inline constexpr std::string_view kEnvironmentHelp =
    "Environment: MPISENTRY_LIBRARY (the library to preload), MPISENTRY_MPIEXEC (the launcher used with -n).";

// --help: the forms, every option, with the help text of flags.def.
std::string usage();

// What follows `mpisentry --replay DIR` to replay one run of the
// exploration `args` asks for: its options but the EXPLORE ones, and its job.
std::vector<std::string> replay_arguments(const Arguments& args);

}  // namespace mpisentry::launcher
