#include "launcher/arguments.hpp"

#include "config/keys.hpp"
#include "config/text.hpp"

#include <charconv>

namespace mpisentry::launcher {
namespace {

using config::Problem;

constexpr std::string_view config_option = "--config";
constexpr std::string_view check_option = "--check";
constexpr std::string_view potential_option = "--potential";
constexpr std::string_view check_all_option = "--check-all";
// What --check-all switches on: every check but potential mode, which
// changes how sends run and keeps its own switch, and the race summary,
// which is information (most races are intended), not a problem.
constexpr std::string_view check_all_patterns[] = {"GLOBAL:COLLECTIVE:** ON", "GLOBAL:MSG:** ON", "GLOBAL:RMA:** ON",
                                                   "LOCAL:** ON", "GLOBAL:MSG:RACE OFF"};
constexpr std::string_view help_option = "--help";
// `--explore` without a number of runs.
constexpr std::string_view kDefaultExploreRuns = "50";
const std::string explore_option = config::option_name(config::name_of(&config::Settings::explore_runs));
constexpr std::string_view version_option = "--version";

// The config key an option sets; empty for options that set none.
std::string key_of(std::string_view option) {
  if (option == check_option) return std::string(config::check_key);
  for (const config::Key& key : config::keys())
    if (option == config::option_name(key.name)) return std::string(key.name);
  return {};
}

bool is_switch(const std::string& key) {
  const config::Key* found = config::find_key(key);
  return found && std::holds_alternative<bool config::Settings::*>(found->member);
}

std::vector<std::string> option_names() {
  std::vector<std::string> names = {std::string(config_option), std::string(check_option),
                                    std::string(potential_option), std::string(check_all_option),
                                    std::string(help_option),
                                    std::string(version_option)};
  for (const config::Key& key : config::keys()) names.push_back(config::option_name(key.name));
  return names;
}

Problem unknown_option(std::string_view option) {
  const auto names = option_names();
  const std::vector<std::string_view> candidates(names.begin(), names.end());
  std::string message = "unknown option";
  if (const auto guess = config::nearest(option, candidates); !guess.empty())
    message += " (did you mean " + std::string(guess) + "?)";
  return {std::string(option), message};
}

bool is_positive_number(std::string_view text) {
  int value = 0;
  const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), value);
  return status == std::errc{} && end == text.data() + text.size() && value > 0;
}

// Digits, with a '-' before them or not: a number of runs as written, which
// the config's range then checks (0 is one run, -1 is refused by name).
bool is_whole_number(std::string_view text) {
  if (text.starts_with('-')) text.remove_prefix(1);
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

Arguments parse_arguments(std::span<const std::string> words) {
  Arguments args;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--") {
      args.launcher_line.assign(words.begin() + i + 1, words.end());
      if (args.launcher_line.empty()) args.errors.push_back({"--", "needs a launcher line after it, e.g. -- mpiexec -n 2 ./app"});
      break;
    }
    if (word == "-n" || word == "-np") {
      if (i + 1 == words.size() || !is_positive_number(words[i + 1])) {
        args.errors.push_back({word, i + 1 == words.size() ? "needs a number of ranks"
                                                           : config::in_quotes(words[i + 1]) + " is not a positive number of ranks"});
        ++i;
        continue;
      }
      args.ranks = words[++i];
      continue;
    }
    if (word == help_option || word == "-h") {
      args.help = true;
      continue;
    }
    if (word == version_option) {
      args.version = true;
      continue;
    }
    if (word == potential_option) {
      args.settings.push_back({std::string(config::check_key), "GLOBAL:DEADLOCK:POTENTIAL ON", word});
      continue;
    }
    // --explore takes its number of runs only when one follows, 0 too.
    if (word == explore_option && (i + 1 == words.size() || !is_whole_number(words[i + 1]))) {
      args.settings.push_back({std::string(config::name_of(&config::Settings::explore_runs)),
                               std::string(kDefaultExploreRuns), word});
      continue;
    }
    if (word == check_all_option) {
      for (const std::string_view pattern : check_all_patterns)
        args.settings.push_back({std::string(config::check_key), std::string(pattern), word});
      continue;
    }
    if (word.empty()) {
      // Mostly an unset variable ("$APP"); a message about "" would name nothing.
      args.errors.push_back({"argument " + std::to_string(i + 1), "is empty where an option or the program should be"});
      break;
    }
    if (!word.starts_with('-')) {
      // The program; everything after it is its own.
      args.program.assign(words.begin() + i, words.end());
      break;
    }
    // "--option value" or "--option=value"
    const auto equals = word.find('=');
    const std::string option = word.substr(0, equals);
    const std::string key = key_of(option);
    if (key.empty() && option != config_option) {
      args.errors.push_back(unknown_option(option));
      continue;
    }
    std::string value;
    if (bool on = true; equals == std::string::npos && is_switch(key) &&
                        (i + 1 == words.size() || !config::parse_switch(words[i + 1], on))) {
      value = "on";  // a switch alone is on
    } else if (equals != std::string::npos) {
      value = word.substr(equals + 1);
    } else if (i + 1 < words.size()) {
      value = words[++i];
    } else {
      args.errors.push_back({option, "needs a value"});
      continue;
    }
    if (option == config_option)
      args.config_file = value;
    else
      args.settings.push_back({key, value, option});
  }
  // What to run, once every word made sense.
  if (args.help || args.version || !args.errors.empty()) return args;
  if (!args.launcher_line.empty() && !args.ranks.empty())
    args.errors.push_back({"-n", "cannot be combined with --; put -n in the launcher line"});
  else if (!args.ranks.empty() && args.program.empty())
    args.errors.push_back({"-n " + args.ranks, "needs the program to run after it"});
  else if (!args.program.empty() && args.ranks.empty())
    args.errors.push_back({args.program.front(), "give -n N before the program, or -- and a launcher line"});
  else if (args.ranks.empty() && args.launcher_line.empty())
    args.errors.push_back({"mpisentry", "nothing to run; give -n N ./app [args...] or -- LAUNCHER ARGS..."});
  return args;
}

std::span<const CommandForm> command_forms() {
  static constexpr CommandForm forms[] = {
      {"mpisentry [options] -n N ./app [args...]", "runs mpiexec -n N ./app args..."},
      {"mpisentry [options] -- LAUNCHER [args...]", "runs the launcher line as given"},
      {"mpisentry dump PID",
       "asks the job of launcher PID, started with --dump-signal, for a report of every rank's state (dump --help)"},
      {"mpisentry analyze [options] DIR",
       "looks in the logs of a run made with --comm-log DIR for the matchings of receives from MPI_ANY_SOURCE "
       "that deadlock, and confirms each by a run of the program forced to it (analyze --help)"},
      {"mpisentry report FILE.json", "makes a page of the JSON report to read in a browser (report --help)"}};
  return forms;
}

std::vector<OptionHelp> options_help() {
  std::vector<OptionHelp> options;
  options.push_back({"--config FILE", "read settings from FILE (ITC syntax; default: $MPISENTRY_CONFIG, else $VT_CONFIG)"});
  const config::Settings defaults;
  for (const config::Key& key : config::keys()) {
    options.push_back({config::option_name(key.name) + ' ' + config::value_syntax(key),
                       std::string(key.help) + " (" + std::string(key.name) + ", default " +
                           config::value_text(key, defaults) + ')'});
  }
  options.push_back({"--check \"PATTERN ON|OFF\"", std::string(kCheckPatternHelp) + " (repeatable)"});
  for (const config::CheckInfo& check : config::switchable_checks())
    options.push_back({std::string(check.name),
                       std::string(check.help) + (defaults.*check.member ? " (default ON)" : " (default OFF)"), true});
  options.push_back({std::string(potential_option), "the same as --check \"GLOBAL:DEADLOCK:POTENTIAL ON\""});
  std::string check_all_text;
  for (const std::string_view pattern : check_all_patterns)
    check_all_text += (check_all_text.empty() ? "--check \"" : " --check \"") + std::string(pattern) + "\"";
  options.push_back({std::string(check_all_option),
                     "for a test run: every consistency check on but the race summary (" + check_all_text +
                         "); they cost more than the deadlock checks (README)"});
  options.push_back({std::string(help_option), "show this text"});
  options.push_back({std::string(version_option), "show the version"});
  return options;
}

std::string usage() {
  constexpr std::size_t width = 80;
  std::string text;
  for (const CommandForm& form : command_forms())
    text += wrapped(form.does, width, (text.empty() ? "usage: " : "       ") + std::string(form.command), 49);
  text += "\n" + wrapped(kDescription, width) + "\noptions:\n";
  for (const OptionHelp& option : options_help())
    text += wrapped(option.help, width, (option.is_check ? "    " : "  ") + option.option, 34);
  return text + "\n" + wrapped(kTimeSyntax, width) + wrapped(kEnvironmentHelp, width);
}

std::string wrapped(std::string_view text, std::size_t width, std::string first, std::size_t column) {
  std::string out, line = std::move(first);
  for (const auto word : config::split(text, " ")) {
    if (line.empty() || line.size() < column) {
      line.resize(column, ' ');
      line += word;
    } else if (line.size() + 1 + word.size() > width) {
      out += line + '\n';
      line = std::string(column, ' ') + std::string(word);
    } else {
      line += ' ' + std::string(word);
    }
  }
  return out + line + '\n';
}

std::vector<std::string> replay_arguments(const Arguments& args) {
  std::vector<std::string> words;
  for (const OptionSetting& setting : args.settings) {
    if (setting.key == config::name_of(&config::Settings::explore_runs) ||
        setting.key == config::name_of(&config::Settings::explore_changes) ||
        setting.key == config::name_of(&config::Settings::explore_dir))
      continue;
    // --check-all and --potential stand for CHECK lines: given as such.
    words.push_back(setting.key == config::check_key ? "--check" : setting.option);
    words.push_back(setting.value);
  }
  if (!args.config_file.empty()) words.insert(words.end(), {"--config", args.config_file});
  if (args.launcher_line.empty()) {
    words.insert(words.end(), {"-n", args.ranks});
    words.insert(words.end(), args.program.begin(), args.program.end());
  } else {
    words.push_back("--");
    words.insert(words.end(), args.launcher_line.begin(), args.launcher_line.end());
  }
  return words;
}

}  // namespace mpisentry::launcher
