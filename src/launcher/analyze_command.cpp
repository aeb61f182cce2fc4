#include "launcher/analyze_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "launcher/analyze.hpp"
#include "recording/comm_log.hpp"

namespace mpisentry::launcher {
namespace {

namespace fs = std::filesystem;
using recording::CommLog;

constexpr int kNone = 0, kFound = 1, kFailed = 2;
constexpr std::size_t kShown = 20;  // choices and stopped ranks printed; --json has them all

std::string usage() {
  return "usage: mpisentry analyze [--json FILE] DIR\n"
         "\n"
         "Reads the communication logs that a run under mpisentry --comm-log DIR wrote\n"
         "(DIR/rank-R.log) and looks, without running the program again, for a matching of\n"
         "its receives from MPI_ANY_SOURCE that deadlocks: with standard sends buffered,\n"
         "and with zero buffering (each standard send waiting for its receive). Prints\n"
         "each deadlock found, the receives whose choice made it and where every rank\n"
         "stops; --json FILE writes the same as JSON. Exit status 0: none found; 1: a\n"
         "deadlock found; 2: the logs could not be read or analyzed.\n";
}

struct Arguments {
  bool help = false;
  std::string dir, json;
  std::string error;
};

Arguments parse(std::span<const std::string> words) {
  Arguments args;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--help" || word == "-h") {
      args.help = true;
    } else if (word == "--json") {
      if (i + 1 == words.size()) args.error = "--json needs a file name";
      else args.json = words[++i];
    } else if (word.starts_with("-")) {
      args.error = fmt::format("unknown option \"{}\"", word);
    } else if (!args.dir.empty()) {
      args.error = fmt::format("takes one directory, and no more: \"{}\"", word);
    } else {
      args.dir = word;
    }
  }
  if (args.error.empty() && !args.help && args.dir.empty()) args.error = "needs the directory of the logs";
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

std::string buffering_title(analyze::Buffering buffering) {
  return buffering == analyze::Buffering::Standard ? "With standard sends buffered (as MPI may run small ones)"
                                                   : "With zero buffering (each standard send waits for its receive, "
                                                     "as MPI may run large ones)";
}

std::string rule_text(const analyze::Outcome& outcome, bool chose) {
  std::string rule =
      chose ? "Rule: a receive from MPI_ANY_SOURCE may take any sender's message that is sent and not yet received "
              "(MPI orders only one sender's messages); with the messages the receives above took, the waits below "
              "never end. This holds if the program makes the same calls whatever its receives take."
            : "Rule: each of these ranks waits for an operation that no rank will make; none of them received "
              "from MPI_ANY_SOURCE.";
  if (outcome.buffering == analyze::Buffering::Zero)
    rule += " With zero buffering a standard send waits until its receive takes it, which MPI allows.";
  return rule;
}

std::string reason_text(const analyze::Choice& taken) {
  switch (taken.reason) {
    case analyze::Reason::Starves:
      return fmt::format("the last that a later receive of rank {} from rank {} needs", taken.rank, taken.sender);
    case analyze::Reason::StarvesTag:
      return fmt::format("the last of tag {} that a later receive of rank {} needs", taken.tag, taken.rank);
    case analyze::Reason::Needed: return fmt::format("one that a later receive of rank {} waits for", taken.rank);
    case analyze::Reason::First: break;
  }
  return "the first that came: no message there was one a later receive needs";
}

void print_outcome(const std::vector<CommLog>& logs, const analyze::Outcome& outcome) {
  std::cout << buffering_title(outcome.buffering) << ":\n";
  if (!outcome.deadlock()) {
    const std::size_t matched = outcome.choices.size();
    std::cout << (matched == 0 ? std::string("  no deadlock found (no receive from MPI_ANY_SOURCE to choose for).\n")
                               : fmt::format("  no deadlock found ({} receive{} from MPI_ANY_SOURCE matched; none could "
                                             "take the last message that a later receive needs).\n",
                                             matched, matched == 1 ? "" : "s"));
    const auto ended = std::ranges::count_if(outcome.stopped, &analyze::Stopped::log_ends);
    if (ended > 0)
      std::cout << fmt::format("  where the logs end without MPI_Finalize, the recorded run went no further: {} "
                               "rank{} there, {} waiting for them.\n",
                               ended, ended == 1 ? " stops" : "s stop",
                               outcome.stopped.size() - static_cast<std::size_t>(ended));
    return;
  }
  std::cout << "  DEADLOCK";
  const std::vector<analyze::Choice> choices = outcome.deadlock_choices();
  if (!choices.empty()) {
    std::cout << " when these receives from MPI_ANY_SOURCE take these messages:\n";
    for (std::size_t i = 0; i < choices.size() && i < kShown; ++i) {
      const analyze::Choice& taken = choices[i];
      std::cout << fmt::format("    rank {}: {}\n      takes rank {}'s message (tag {}), {}\n", taken.rank,
                               analyze::op_text(logs[taken.rank], taken.op), taken.sender, taken.tag,
                               reason_text(taken));
    }
    if (choices.size() > kShown)
      std::cout << fmt::format("    and {} more (--json lists every one)\n", choices.size() - kShown);
  } else {
    std::cout << ":\n";
  }
  std::cout << "  where each rank stops:\n";
  for (std::size_t i = 0; i < outcome.stopped.size() && i < kShown; ++i) {
    const analyze::Stopped& stop = outcome.stopped[i];
    const CommLog& log = logs[stop.rank];
    std::cout << fmt::format("    rank {}: {}\n      {}{}\n", stop.rank,
                             stop.log_ends ? fmt::format("after rank-{}.log line {}", stop.rank,
                                                         log.ops.empty() ? 3 : log.ops.back().line)
                                           : analyze::op_text(log, stop.op),
                             stop.why,
                             stop.after_cut && !stop.log_ends ? " (it waits for the end of the recorded run, not in "
                                                                "the deadlock)"
                                                              : "");
  }
  if (outcome.stopped.size() > kShown)
    std::cout << fmt::format("    and {} more ranks (--json lists every one)\n", outcome.stopped.size() - kShown);
  std::cout << "  " << rule_text(outcome, !choices.empty()) << '\n';
}

nlohmann::json outcome_json(const std::vector<CommLog>& logs, const analyze::Outcome& outcome) {
  nlohmann::json json;
  json["buffering"] = outcome.buffering == analyze::Buffering::Standard ? "standard" : "zero";
  json["deadlock"] = outcome.deadlock();
  json["wildcard_receives"] = outcome.choices.size();
  json["choices"] = nlohmann::json::array();  // of the ranks in the deadlock
  for (const analyze::Choice& taken : outcome.deadlock_choices())
    json["choices"].push_back({{"rank", taken.rank},
                               {"operation", analyze::op_text(logs[taken.rank], taken.op)},
                               {"line", logs[taken.rank].ops[taken.op].line},
                               {"sender", taken.sender},
                               {"tag", taken.tag},
                               {"why", reason_text(taken)}});
  json["stopped"] = nlohmann::json::array();
  for (const analyze::Stopped& stop : outcome.stopped) {
    const CommLog& log = logs[stop.rank];
    json["stopped"].push_back({{"rank", stop.rank},
                               {"log_ends", stop.log_ends},
                               {"after_log_end", stop.after_cut},
                               {"operation", stop.log_ends ? "" : analyze::op_text(log, stop.op)},
                               {"line", stop.log_ends ? 0 : log.ops[stop.op].line},
                               {"why", stop.why}});
  }
  return json;
}

}  // namespace

int run_analyze_command(std::span<const std::string> words) {
  const Arguments args = parse(words);
  if (args.help) {
    std::cout << usage();
    return kNone;
  }
  if (!args.error.empty()) {
    std::cerr << "mpisentry analyze: " << args.error << "\n" << usage();
    return kFailed;
  }
  std::vector<CommLog> logs;
  try {
    logs = read_logs(args.dir);
    analyze::validate(logs);
  } catch (const std::invalid_argument& bad) {
    std::cerr << "mpisentry analyze: " << bad.what() << '\n';
    return kFailed;
  }
  std::size_t operations = 0, wildcards = 0;
  bool threads = false;
  for (const CommLog& log : logs) {
    operations += log.ops.size();
    threads = threads || log.multiple_threads;
    for (const recording::Op& op : log.ops)
      wildcards += analyze::receives_from_any_source(op);
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
  json["schema"] = "mpisentry-analyze/1";
  json["directory"] = args.dir;
  json["ranks"] = logs.size();
  json["operations"] = operations;
  json["runs"] = nlohmann::json::array();
  bool found = false;
  for (const analyze::Buffering buffering : {analyze::Buffering::Standard, analyze::Buffering::Zero}) {
    const analyze::Outcome outcome = analyze::run(logs, buffering);
    std::cout << '\n';
    print_outcome(logs, outcome);
    json["runs"].push_back(outcome_json(logs, outcome));
    found = found || outcome.deadlock();
  }
  if (!args.json.empty()) {
    std::ofstream out(args.json);
    out << json.dump(2) << '\n';
    if (!out) {
      std::cerr << "mpisentry analyze: cannot write " << args.json << '\n';
      return kFailed;
    }
  }
  return found ? kFound : kNone;
}

}  // namespace mpisentry::launcher
