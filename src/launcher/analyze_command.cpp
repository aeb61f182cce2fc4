#include "launcher/analyze_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/exit_status.hpp"
#include "config/keys.hpp"
#include "config/text.hpp"
#include "offline/analyze.hpp"
#include "launcher/arguments.hpp"
#include "offline/explore.hpp"
#include "launcher/job.hpp"
#include "launcher/runs.hpp"
#include "recording/comm_log.hpp"

namespace mpisentry::launcher {
namespace {

namespace fs = std::filesystem;
using recording::CommLog;

constexpr int kNone = 0, kConfirmed = 1, kUnconfirmed = 3;
constexpr std::size_t kShown = 20;  // choices and stopped ranks printed; --json has them all
constexpr std::string_view kRunsFile = "confirmations.json";

constexpr std::string_view kJsonOption = "--json", kRunsDirOption = "--runs-dir", kNoConfirmOption = "--no-confirm";

struct AnalyzeArguments {
  bool help = false;
  bool confirm = true;
  std::string dir, json;
  std::string runs_dir = "mpisentry-analyze";
  std::vector<OptionSetting> settings;  // of the confirming runs
  std::vector<config::Problem> errors;
};

AnalyzeArguments parse(std::span<const std::string> words) {
  CommandLine line =
      parse_command_line(analyze_options(), words, Operands::AmongOptions, "the directory", std::string(kAnalyzeCommandName) + ": ");
  AnalyzeArguments args;
  args.errors = std::move(line.errors);
  for (GivenOption& given : line.options) {
    const std::string_view name = given.option->name;
    if (name == help_option().name) args.help = true;
    else if (name == kJsonOption) args.json = std::move(given.value);
    else if (name == kRunsDirOption) args.runs_dir = std::move(given.value);
    else if (name == kNoConfirmOption) args.confirm = false;
    else args.settings.push_back({given.option->setting, std::move(given.value), given.written});
  }
  if (line.operands.size() > 1)
    args.errors.push_back({std::string(kAnalyzeCommandName), "takes one directory, and no more: " + config::in_quotes(line.operands[1])});
  else if (line.operands.size() == 1)
    args.dir = line.operands.front();
  else if (args.errors.empty() && !args.help)
    args.errors.push_back({std::string(kAnalyzeCommandName), "needs the directory of the logs"});
  return args;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(fmt::format("{}: cannot read it", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

CommLog read_log(const fs::path& path) {
  try {
    return recording::parse_log(read_file(path));
  } catch (const std::invalid_argument& bad) {
    throw std::invalid_argument(fmt::format("{}: {}", path.string(), bad.what()));
  }
}

// Every rank's log, rank 0's header giving how many; progress on a terminal.
std::vector<CommLog> read_logs(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw std::invalid_argument(fmt::format("{}: no such directory", dir.string()));
  if (!fs::exists(dir / "rank-0.log"))
    throw std::invalid_argument(fmt::format(
        "{}: no rank-0.log; a run writes its communication logs there with mpisentry --comm-log {}", dir.string(),
        dir.string()));
  std::vector<CommLog> logs;
  logs.push_back(read_log(dir / "rank-0.log"));
  const int ranks = logs.front().ranks;
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  auto shown = std::chrono::steady_clock::now();
  for (int rank = 1; rank < ranks; ++rank) {
    const fs::path path = dir / fmt::format("rank-{}.log", rank);
    if (!fs::exists(path))
      throw std::invalid_argument(
          fmt::format("{}: missing; rank-0.log says the run had {} ranks", path.string(), ranks));
    logs.push_back(read_log(path));
    if (terminal && std::chrono::steady_clock::now() - shown > std::chrono::seconds(1)) {
      shown = std::chrono::steady_clock::now();
      std::cerr << fmt::format("\rmpisentry analyze: read {} of {} logs", rank + 1, ranks) << std::flush;
    }
  }
  if (terminal && ranks > 1) std::cerr << "\r\033[K" << std::flush;
  return logs;
}

void say(const std::string& line) { std::cerr << "mpisentry analyze: " << line << std::endl; }

std::string buffering_name(offline::analyze::Buffering buffering) {
  return buffering == offline::analyze::Buffering::Standard ? "standard" : "zero";
}

// ---------------------------------------------------------------------------
// The confirming runs.

// What a run of the program forced to a deadlock's matching showed.
struct Confirmation {
  bool confirmed = false;
  std::string what;       // what the run showed, or why none was made
  std::string directory;  // the run's files; empty when none was made
  std::string replay;     // the command that replays a run that confirmed
};

// No run was made, for `why`.
Confirmation not_run(std::string why) {
  Confirmation none;
  none.what = std::move(why);
  return none;
}

// The words of a command line as the recording keeps it (blanks between the
// arguments; an argument with blanks of its own is split).
std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

class Confirmer {
 public:
  Confirmer(const AnalyzeArguments& args, const std::vector<CommLog>& logs, const config::Settings& settings,
            const config::EnvLookup& env)
      : args_(args), logs_(logs), runs_dir_(fs::absolute(args.runs_dir)) {
    std::error_code error;
    self_ = fs::read_symlink("/proc/self/exe", error).string();
    limit_ = std::chrono::duration_cast<std::chrono::seconds>(config::any_verdict_after(settings.deadlock_timeout) +
                                                              settings.deadlock_warning) +
             std::chrono::seconds(30);
    mpiexec_ = choose_mpiexec(env, std::nullopt).command;
  }

  // Throws std::runtime_error when the runs' directory cannot be used.
  Confirmation confirm(const offline::analyze::Outcome& outcome) {
    if (!args_.confirm) return not_run("no run was made (--no-confirm)");
    if (runs::stop_signal() != 0) return not_run("no run was made: stopped by a signal");
    if (recordings_.empty())
      for (int rank = 0; rank < static_cast<int>(logs_.size()); ++rank)
        recordings_.push_back(runs::read_recording(args_.dir, rank));
    const auto none = std::ranges::find_if(logs_, [](const CommLog& log) { return words_of(log.command).empty(); });
    if (none != logs_.end())
      return not_run(fmt::format("no run could be made: rank-{}.log names no command line", none->rank));
    offline::explore::Schedule schedule;
    try {
      schedule = offline::analyze::forcing(logs_, recordings_, outcome);
    } catch (const std::invalid_argument& bad) {
      return not_run(fmt::format("no run could be forced to this matching: {}/{} (--comm-log records the run "
                                 "beside its logs, unless --record or --replay is given)",
                                 args_.dir, bad.what()));
    }
    fs::path directory = fs::current_path();
    if (const std::string& logged = logs_.front().directory; !logged.empty()) {
      std::error_code error;
      if (!fs::is_directory(logged, error))
        return not_run(fmt::format("no run could be made: the logged run's directory, {}, is not here", logged));
      directory = logged;
    }
    prepare();
    const bool zero = outcome.buffering == offline::analyze::Buffering::Zero;
    const fs::path run_dir = runs_dir_ / buffering_name(outcome.buffering);
    const fs::path schedule_dir = run_dir / "schedule", record_dir = run_dir / "record";
    fs::create_directories(schedule_dir);
    for (const CommLog& log : logs_) {
      const auto forced = schedule.forced.find(log.rank);
      std::ofstream(schedule_dir / fmt::format("rank-{}.record", log.rank))
          << offline::explore::schedule_text({log.rank, log.ranks, log.command},
                                    forced == schedule.forced.end() ? nullptr : &forced->second);
    }
    std::vector<std::string> command = {self_,
                                        "--replay",
                                        schedule_dir.string(),
                                        "--record",
                                        record_dir.string(),
                                        "--report-file",
                                        (run_dir / "report.txt").string(),
                                        "--report-json",
                                        (run_dir / "report.json").string(),
                                        "--explore=0",
                                        "--comm-log="};
    const std::vector<std::string> job = job_words(zero);
    command.insert(command.end(), job.begin(), job.end());
    say(fmt::format("a deadlock with {} buffering: confirming it by a run forced to its matching{}, in {} ...",
                    buffering_name(outcome.buffering), zero ? " (--potential: each standard send synchronous)" : "",
                    run_dir.string()));
    const runs::JobEnd end = runs::run_job(command, {}, run_dir / "output.txt", limit_, directory);
    const offline::explore::RunFacts facts = runs::facts_of(end, run_dir, record_dir, static_cast<int>(logs_.size()));
    const offline::explore::Outcome judged = offline::explore::classify(facts, schedule, 0);
    Confirmation confirmation;
    confirmation.directory = run_dir.string();
    switch (judged.verdict) {
      case offline::explore::Verdict::Failed:
        confirmation.confirmed = judged.deadlock;
        confirmation.what = judged.deadlock ? "the run forced to this matching hung: " + judged.what
                                            : "the run forced to this matching ended otherwise, not in this "
                                              "deadlock: " + judged.what;
        break;
      case offline::explore::Verdict::Infeasible:
        confirmation.what = "the run could not be forced to this matching: " + judged.what;
        break;
      case offline::explore::Verdict::Passed:
        confirmation.what = "the run forced to this matching passed: under it the program makes other calls than "
                            "the logged ones (they follow what it receives), or its free part went otherwise";
        break;
    }
    if (confirmation.confirmed) {
      confirmation.replay = "mpisentry --replay " + runs::shell_word(record_dir.string());
      for (const std::string& word : job) confirmation.replay += ' ' + runs::shell_word(word);
    }
    say(fmt::format("{} ({:.1f} s)", confirmation.confirmed ? "confirmed" : "not confirmed", end.seconds));
    results_.push_back({{"buffering", buffering_name(outcome.buffering)},
                        {"confirmed", confirmation.confirmed},
                        {"what", confirmation.what},
                        {"command", command},
                        {"directory", directory.string()},
                        {"exit_status", end.exit_status},
                        {"seconds", end.seconds},
                        {"replay", confirmation.replay}});
    write_results();
    return confirmation;
  }

 private:
  // The runs' directory, emptied once before the first run.
  void prepare() {
    if (prepared_) return;
    if (const auto problem = runs::prepare_directory(runs_dir_, kRunsFile, "an analysis's runs", "--runs-dir"))
      throw std::runtime_error("--runs-dir: " + *problem);
    prepared_ = true;
    write_results();
  }

  void write_results() const {
    std::ofstream(runs_dir_ / kRunsFile) << nlohmann::json{{"schema", "mpisentry-analyze-runs/1"},
                                                           {"logs", fs::absolute(args_.dir).string()},
                                                           {"runs", results_}}
                                                .dump(1)
                                         << '\n';
  }

  // The options that hold for the run, then the ranks' commands: -n N and
  // the one all ranks ran, else an MPMD line of mpiexec.
  std::vector<std::string> job_words(bool zero) const {
    std::vector<std::string> words;
    if (zero) words.push_back("--potential");
    for (const OptionSetting& setting : args_.settings) words.insert(words.end(), {setting.option, setting.value});
    const bool one_command = std::ranges::all_of(
        logs_, [&](const CommLog& log) { return log.command == logs_.front().command; });
    if (one_command) {
      words.insert(words.end(), {"-n", std::to_string(logs_.size())});
      for (const std::string& word : words_of(logs_.front().command)) words.push_back(word);
      return words;
    }
    words.insert(words.end(), {"--", mpiexec_});
    for (std::size_t first = 0; first < logs_.size();) {
      std::size_t last = first;
      while (last + 1 < logs_.size() && logs_[last + 1].command == logs_[first].command) ++last;
      if (first > 0) words.push_back(":");
      words.insert(words.end(), {"-n", std::to_string(last - first + 1)});
      for (const std::string& word : words_of(logs_[first].command)) words.push_back(word);
      first = last + 1;
    }
    return words;
  }

  const AnalyzeArguments& args_;
  const std::vector<CommLog>& logs_;
  fs::path runs_dir_;
  std::string self_, mpiexec_;
  std::chrono::seconds limit_{0};
  std::vector<recording::Recording> recordings_;
  bool prepared_ = false;
  nlohmann::json results_ = nlohmann::json::array();
};

// ---------------------------------------------------------------------------
// The output.

std::string buffering_title(offline::analyze::Buffering buffering) {
  return buffering == offline::analyze::Buffering::Standard ? "With standard sends buffered (as MPI may run small ones)"
                                                   : "With zero buffering (each standard send waits for its receive, "
                                                     "as MPI may run large ones)";
}

std::string rule_text(const offline::analyze::Outcome& outcome, bool chose) {
  std::string rule =
      chose ? "Rule: a receive from MPI_ANY_SOURCE may take any sender's message that is sent and not yet received "
              "(MPI orders only one sender's messages); with the messages the receives above took, the waits below "
              "never end. This holds if the program makes the same calls whatever its receives take."
            : "Rule: each of these ranks waits for an operation that no rank will make; none of them received "
              "from MPI_ANY_SOURCE.";
  if (outcome.buffering == offline::analyze::Buffering::Zero)
    rule += " With zero buffering a standard send waits until its receive takes it, which MPI allows.";
  return rule;
}

std::string reason_text(const offline::analyze::Choice& taken) {
  switch (taken.reason) {
    case offline::analyze::Reason::Starves:
      return fmt::format("the last that a later receive of rank {} from rank {} needs", taken.rank, taken.sender);
    case offline::analyze::Reason::StarvesTag:
      return fmt::format("the last of tag {} that a later receive of rank {} needs", taken.tag, taken.rank);
    case offline::analyze::Reason::Needed: return fmt::format("one that a later receive of rank {} waits for", taken.rank);
    case offline::analyze::Reason::First: break;
  }
  return "the first that came: no message there was one a later receive needs";
}

void print_outcome(const std::vector<CommLog>& logs, const offline::analyze::Outcome& outcome,
                   const Confirmation& confirmation) {
  std::cout << buffering_title(outcome.buffering) << ":\n";
  if (!outcome.deadlock()) {
    const std::size_t matched = outcome.choices.size();
    std::cout << (matched == 0 ? std::string("  no deadlock found (no receive from MPI_ANY_SOURCE to choose for).\n")
                               : fmt::format("  no deadlock found ({} receive{} from MPI_ANY_SOURCE matched; none could "
                                             "take the last message that a later receive needs).\n",
                                             matched, matched == 1 ? "" : "s"));
    const auto ended = std::ranges::count_if(outcome.stopped, &offline::analyze::Stopped::log_ends);
    if (ended > 0)
      std::cout << fmt::format("  where the logs end without MPI_Finalize, the recorded run went no further: {} "
                               "rank{} there, {} waiting for them.\n",
                               ended, ended == 1 ? " stops" : "s stop",
                               outcome.stopped.size() - static_cast<std::size_t>(ended));
    return;
  }
  std::cout << (confirmation.confirmed ? "  DEADLOCK" : "  UNCONFIRMED DEADLOCK");
  const std::vector<offline::analyze::Choice> choices = outcome.deadlock_choices();
  if (!choices.empty()) {
    std::cout << " when these receives from MPI_ANY_SOURCE take these messages:\n";
    for (std::size_t i = 0; i < choices.size() && i < kShown; ++i) {
      const offline::analyze::Choice& taken = choices[i];
      std::cout << fmt::format("    rank {}: {}\n      takes rank {}'s message (tag {}), {}\n", taken.rank,
                               offline::analyze::op_text(logs[taken.rank], taken.op), taken.sender, taken.tag,
                               reason_text(taken));
    }
    if (choices.size() > kShown)
      std::cout << fmt::format("    and {} more (--json lists every one)\n", choices.size() - kShown);
  } else {
    std::cout << ":\n";
  }
  std::cout << "  where each rank stops:\n";
  for (std::size_t i = 0; i < outcome.stopped.size() && i < kShown; ++i) {
    const offline::analyze::Stopped& stop = outcome.stopped[i];
    const CommLog& log = logs[stop.rank];
    std::cout << fmt::format("    rank {}: {}\n      {}{}\n", stop.rank,
                             stop.log_ends ? log.ops.empty()
                                                 ? fmt::format("after the header of rank-{}.log", stop.rank)
                                                 : fmt::format("after rank-{}.log line {}", stop.rank,
                                                               log.ops.back().line)
                                           : offline::analyze::op_text(log, stop.op),
                             stop.why,
                             stop.after_cut && !stop.log_ends ? " (it waits for the end of the recorded run, not in "
                                                                "the deadlock)"
                                                              : "");
  }
  if (outcome.stopped.size() > kShown)
    std::cout << fmt::format("    and {} more ranks (--json lists every one)\n", outcome.stopped.size() - kShown);
  std::cout << "  " << rule_text(outcome, !choices.empty()) << '\n';
  if (confirmation.confirmed) {
    std::cout << fmt::format("  Confirmed: {}.\n    files: {}; replay: {}\n", confirmation.what, confirmation.directory,
                             confirmation.replay);
  } else {
    std::cout << fmt::format("  Not confirmed: {}{}.\n  A deadlock that needs the program to make other calls than "
                             "the logged ones is not a finding.\n",
                             confirmation.what,
                             confirmation.directory.empty() ? "" : fmt::format(" (files: {})", confirmation.directory));
  }
}

nlohmann::json outcome_json(const std::vector<CommLog>& logs, const offline::analyze::Outcome& outcome,
                            const Confirmation& confirmation) {
  nlohmann::json json;
  json["buffering"] = buffering_name(outcome.buffering);
  json["deadlock"] = outcome.deadlock();
  json["confirmed"] = confirmation.confirmed;
  if (outcome.deadlock())
    json["confirmation"] = {{"what", confirmation.what},
                            {"directory", confirmation.directory},
                            {"replay", confirmation.replay}};
  json["wildcard_receives"] = outcome.choices.size();
  json["choices"] = nlohmann::json::array();  // of the ranks in the deadlock
  for (const offline::analyze::Choice& taken : outcome.deadlock_choices())
    json["choices"].push_back({{"rank", taken.rank},
                               {"operation", offline::analyze::op_text(logs[taken.rank], taken.op)},
                               {"line", logs[taken.rank].ops[taken.op].line},
                               {"sender", taken.sender},
                               {"tag", taken.tag},
                               {"why", reason_text(taken)}});
  json["stopped"] = nlohmann::json::array();
  for (const offline::analyze::Stopped& stop : outcome.stopped) {
    const CommLog& log = logs[stop.rank];
    json["stopped"].push_back({{"rank", stop.rank},
                               {"log_ends", stop.log_ends},
                               {"after_log_end", stop.after_cut},
                               {"operation", stop.log_ends ? "" : offline::analyze::op_text(log, stop.op)},
                               {"line", stop.log_ends ? 0 : log.ops[stop.op].line},
                               {"why", stop.why}});
  }
  return json;
}

}  // namespace

std::span<const OptionSpec> analyze_options() {
  static const std::vector<OptionSpec> table = [] {
    OptionSpec deadlock_timeout =
        setting_option(*config::find_key(config::name_of(&config::Settings::deadlock_timeout)));
    deadlock_timeout.help = "DEADLOCK-TIMEOUT of the confirming runs (default: as configured)";
    return std::vector<OptionSpec>{
        value_option(std::string(kJsonOption), "FILE", "a file name", "write the same as JSON (schema mpisentry-analyze/2)"),
        value_option(std::string(kRunsDirOption), "DIR", "a directory",
                     "where the confirming runs' files go (DIR/standard, DIR/zero: schedule, recording, output and "
                     "reports, and DIR/confirmations.json); it must be new, empty or an earlier analysis's (default: "
                     "mpisentry-analyze in the current directory)"),
        deadlock_timeout,
        flag_option(std::string(kNoConfirmOption), "run nothing: every deadlock found is reported UNCONFIRMED"),
        help_option(),
    };
  }();
  return table;
}

std::string analyze_usage() {
  std::string text = "usage: mpisentry analyze [options] DIR\n\n" + wrapped(kAnalyzeDescription, kHelpWidth) +
                     "\noptions:\n" + options_text(help_rows(analyze_options()), 32);
  text += "\nexit status:\n";
  for (const config::ExitStatus& status : config::kExitStatuses)
    if (status.command == kAnalyzeCommandName)
      text += wrapped(status.meaning, kHelpWidth, "  " + std::string(status.status), 9);
  return text;
}

int run_analyze_command(std::span<const std::string> words) {
  const AnalyzeArguments args = parse(words);
  if (args.help) {
    std::cout << analyze_usage();
    return kNone;
  }
  if (!args.errors.empty()) {
    for (const config::Problem& problem : args.errors) std::cerr << problem.str() << '\n';
    std::cerr << analyze_usage();
    return config::kCommandFailedStatus;
  }
  // The confirming runs' settings: the environment's, then the options.
  Arguments run_options;
  run_options.settings = args.settings;
  const config::EnvLookup env = [](const char* name) -> const char* { return std::getenv(name); };
  const config::LoadResult settings = resolve_settings(run_options, env);
  if (!settings.ok()) {
    for (const config::Problem& problem : settings.errors) std::cerr << "mpisentry analyze: " << problem.str() << '\n';
    return config::kCommandFailedStatus;
  }
  std::vector<CommLog> logs;
  try {
    logs = read_logs(args.dir);
    offline::analyze::validate(logs);
  } catch (const std::invalid_argument& bad) {
    std::cerr << "mpisentry analyze: " << bad.what() << '\n';
    return config::kCommandFailedStatus;
  }
  std::size_t operations = 0, wildcards = 0;
  bool threads = false;
  for (const CommLog& log : logs) {
    operations += log.ops.size();
    threads = threads || log.multiple_threads;
    for (const recording::Op& op : log.ops)
      wildcards += offline::analyze::receives_from_any_source(op);
  }
  std::cout << fmt::format("mpisentry analyze {}: {} ranks, {} operation{}, {} receive{} from MPI_ANY_SOURCE "
                           "(rank 0 ran: {})\n",
                           args.dir, logs.size(), operations, operations == 1 ? "" : "s", wildcards,
                           wildcards == 1 ? "" : "s",
                           logs.front().command);
  if (threads)
    std::cout << "note: ranks ran at MPI_THREAD_MULTIPLE: a rank's log is one order of its threads' calls, which "
                 "the analysis takes as the order of its calls\n";
  nlohmann::json json;
  json["schema"] = "mpisentry-analyze/2";
  json["directory"] = args.dir;
  json["ranks"] = logs.size();
  json["operations"] = operations;
  json["runs"] = nlohmann::json::array();
  bool found = false, confirmed = false;
  runs::catch_stop_signals();
  Confirmer confirmer(args, logs, settings.settings, env);
  for (const offline::analyze::Buffering buffering : {offline::analyze::Buffering::Standard, offline::analyze::Buffering::Zero}) {
    const offline::analyze::Outcome outcome = offline::analyze::run(logs, buffering);
    Confirmation confirmation;
    try {
      if (outcome.deadlock()) confirmation = confirmer.confirm(outcome);
    } catch (const std::exception& failure) {
      std::cerr << "mpisentry analyze: " << failure.what() << '\n';
      return config::kCommandFailedStatus;
    }
    std::cout << '\n';
    print_outcome(logs, outcome, confirmation);
    json["runs"].push_back(outcome_json(logs, outcome, confirmation));
    found = found || outcome.deadlock();
    confirmed = confirmed || confirmation.confirmed;
  }
  if (!args.json.empty()) {
    std::ofstream out(args.json);
    out << json.dump(2) << '\n';
    if (!out) {
      std::cerr << "mpisentry analyze: cannot write " << args.json << '\n';
      return config::kCommandFailedStatus;
    }
  }
  if (runs::stop_signal() != 0) return 128 + runs::stop_signal();
  return confirmed ? kConfirmed : found ? kUnconfirmed : kNone;
}

}  // namespace mpisentry::launcher
