#include "launcher/arguments.hpp"

#include "config/keys.hpp"
#include "config/text.hpp"

#include <algorithm>
#include <charconv>
#include <iterator>

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
constexpr std::string_view version_option = "--version";
constexpr std::string_view ranks_option = "-n";
// `--explore` without a number of runs.
constexpr std::string_view kDefaultExploreRuns = "50";

std::string check_all_help() {
  std::string patterns;
  for (const std::string_view pattern : check_all_patterns)
    patterns += (patterns.empty() ? "--check \"" : " --check \"") + std::string(pattern) + "\"";
  return "for a test run: every consistency check on but the race summary (" + patterns +
         "); they cost more than the deadlock checks (README)";
}

// The job's options: --config, a setting each key of flags.def, the checks,
// the command's own; -n is in the command's forms.
std::span<const OptionSpec> job_options() {
  static const std::vector<OptionSpec> table = [] {
    std::vector<OptionSpec> options;
    options.push_back(value_option(std::string(config_option), "FILE", "a value",
                                   "read settings from FILE (ITC syntax; default: $MPISENTRY_CONFIG, else $VT_CONFIG)"));
    for (const config::Key& key : config::keys()) {
      OptionSpec option = setting_option(key);
      // --explore takes its number of runs only when one follows, 0 too.
      if (key.name == config::name_of(&config::Settings::explore_runs)) {
        option.value = ValueRule::Number;
        option.absent = kDefaultExploreRuns;
      }
      options.push_back(std::move(option));
    }
    OptionSpec check = value_option(std::string(check_option), "\"PATTERN ON|OFF\"", "a value",
                                    std::string(kCheckPatternHelp) + " (repeatable)");
    check.setting = config::check_key;
    options.push_back(std::move(check));
    options.push_back(flag_option(std::string(potential_option), "the same as --check \"GLOBAL:DEADLOCK:POTENTIAL ON\""));
    options.push_back(flag_option(std::string(check_all_option), check_all_help()));
    options.push_back(help_option());
    options.push_back(flag_option(std::string(version_option), "show the version"));
    // In the command's forms, not among the options.
    options.push_back(value_option(std::string(ranks_option), "N", "a number of ranks", "", "-np"));
    return options;
  }();
  return table;
}

bool is_positive_number(std::string_view text) {
  int value = 0;
  const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), value);
  return status == std::errc{} && end == text.data() + text.size() && value > 0;
}

}  // namespace

Arguments parse_arguments(std::span<const std::string> words) {
  CommandLine line = parse_command_line(job_options(), words, Operands::EndOptions, "the program");
  Arguments args;
  args.errors = std::move(line.errors);
  for (GivenOption& given : line.options) {
    const std::string_view name = given.option->name;
    if (name == ranks_option) {
      if (is_positive_number(given.value)) args.ranks = given.value;
      else args.errors.push_back({given.written, config::in_quotes(given.value) + " is not a positive number of ranks"});
    } else if (name == help_option().name) {
      args.help = true;
    } else if (name == version_option) {
      args.version = true;
    } else if (name == config_option) {
      args.config_file = given.value;
    } else if (name == potential_option) {
      args.settings.push_back({std::string(config::check_key), "GLOBAL:DEADLOCK:POTENTIAL ON", given.written});
    } else if (name == check_all_option) {
      for (const std::string_view pattern : check_all_patterns)
        args.settings.push_back({std::string(config::check_key), std::string(pattern), given.written});
    } else {
      args.settings.push_back({given.option->setting, std::move(given.value), given.written});
    }
  }
  if (line.double_dash) {
    args.launcher_line = std::move(line.operands);
    if (args.launcher_line.empty()) args.errors.push_back({"--", "needs a launcher line after it, e.g. -- mpiexec -n 2 ./app"});
  } else {
    args.program = std::move(line.operands);
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
  std::vector<OptionHelp> rows;
  const config::Settings defaults;
  for (const OptionSpec& option : job_options()) {
    std::ranges::move(help_rows(std::span(&option, 1)), std::back_inserter(rows));
    if (option.name != check_option) continue;
    for (const config::CheckInfo& check : config::switchable_checks())
      rows.push_back({std::string(check.name),
                      std::string(check.help) + (defaults.*check.member ? " (default ON)" : " (default OFF)"), true});
  }
  return rows;
}

std::string usage() {
  std::string text;
  for (const CommandForm& form : command_forms())
    text += wrapped(form.does, kHelpWidth, (text.empty() ? "usage: " : "       ") + std::string(form.command), 49);
  return text + "\n" + wrapped(kDescription, kHelpWidth) + "\noptions:\n" + options_text(options_help(), 34) + "\n" +
         wrapped(kTimeSyntax, kHelpWidth) + wrapped(kEnvironmentHelp, kHelpWidth);
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
