// ITC's report shape (shared/reference/itc-checker.md §3): rank 0 prints one block for
// the whole job, every line prefixed "[0] ERROR: ", ranks merged into classes
// so that a thousand ranks still fit on a screen.
#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "report/report.hpp"

namespace mpisentry::report {
namespace {

// Longer lists of ranks, calls or reasons name this many, then count the rest.
constexpr std::size_t kMaxListed = 8;
constexpr std::size_t kMaxFrames = 32;

// Spaces after the line prefix, as ITC indents: descriptions and class
// headers, then the calls, waits-for lines and frames beneath them.
constexpr int kDescription = 3;
constexpr int kDetail = 6;

class Lines {
 public:
  explicit Lines(std::string prefix) : prefix_(std::move(prefix)) {}
  void add(int indent, std::string_view text) {
    out_ += prefix_;
    out_.append(static_cast<std::size_t>(indent), ' ');
    out_ += text;
    out_ += '\n';
  }
  std::string take() { return std::move(out_); }

 private:
  std::string prefix_;
  std::string out_;
};

// ITC's "0:05 minutes" form of a threshold.
std::string minutes(double seconds) {
  const long long whole = std::isfinite(seconds) ? std::llround(std::max(seconds, 0.0)) : 0;
  return fmt::format("{}:{:02}", whole / 60, whole % 60);
}

// "0:05 minutes" then, for `qualifier` "on average", "0:05 minutes on
// average", and last the setting: "(DEADLOCK-TIMEOUT 5s)".
std::string threshold_text(const Report& report, std::string_view qualifier = {}) {
  return fmt::format("{} minutes {}{}({} {}s)", minutes(report.threshold_seconds), qualifier,
                     qualifier.empty() ? "" : " ", report.threshold_key, report.threshold_seconds);
}

std::string aborted_text(const Report& report) {
  return "Application aborted because no progress was observed for over " + threshold_text(report);
}

std::string tenths(double seconds) { return fmt::format("{:.1f}", seconds); }

// A list from compress_ranks that names a single rank.
bool names_one_rank(std::string_view list) { return list.find_first_of(",-") == std::string_view::npos; }

// "rank 3" or "ranks 0-2,5".
std::string ranks_phrase(const std::vector<int>& ranks) {
  const std::string list = compress_ranks(ranks);
  return (names_one_rank(list) ? "rank " : "ranks ") + list;
}

const std::string& call_text(const RankSnapshot& rank) { return rank.call.empty() ? rank.function : rank.call; }

// "rank 1", "ranks 1-3 (all of them)", "any of ranks 0-3"; empty when the
// rank waits for no known rank.
std::string waits_for_text(const RankSnapshot& rank) {
  if (rank.waits_for.empty()) return {};
  const std::string list = compress_ranks(rank.waits_for);
  if (names_one_rank(list)) return "rank " + list;
  return rank.wait_mode == WaitMode::Any ? "any of ranks " + list : "ranks " + list + " (all of them)";
}

std::string frame_text(const Frame& frame) {
  if (!frame.file.empty()) {
    return frame.line > 0 ? fmt::format("{} ({}:{})", frame.function, frame.file, frame.line)
                          : fmt::format("{} ({})", frame.function, frame.file);
  }
  if (!frame.module.empty()) return fmt::format("{} ({})", frame.function, frame.module);
  return frame.function;
}

// What a class header says a rank is doing; `duration` like "5.2 s".
std::string state_text(RankState state, const std::string& duration) {
  switch (state) {
    case RankState::Blocked:
    case RankState::Finalizing: return fmt::format("blocked for {} in MPI call:", duration);
    case RankState::Polling: return fmt::format("no progress for {}, polling with MPI call:", duration);
    case RankState::Running: return "running outside MPI, now at:";
  }
  return "in an unknown state:";
}

// One duration when the class agrees to a tenth of a second, else the range.
std::string duration_text(const RankClass& rank_class) {
  const auto [shortest, longest] = std::minmax_element(
      rank_class.members.begin(), rank_class.members.end(),
      [](const RankSnapshot* a, const RankSnapshot* b) { return a->seconds < b->seconds; });
  const std::string low = tenths((*shortest)->seconds);
  const std::string high = tenths((*longest)->seconds);
  return low == high ? low + " s" : low + "-" + high + " s";
}

std::string class_label(const RankClass& rank_class) {
  if (rank_class.ranks.size() == 1) return fmt::format("[{}]", rank_class.ranks.front());
  return fmt::format("[ranks {} ({} ranks)]", compress_ranks(rank_class.ranks), rank_class.ranks.size());
}

// "[r] call" lines for the first ranks, then how many more there are.
void add_calls_by_rank(Lines& lines, const std::vector<const RankSnapshot*>& ranks) {
  const std::size_t listed = std::min(ranks.size(), kMaxListed);
  for (std::size_t i = 0; i < listed; ++i) {
    lines.add(kDetail, fmt::format("[{}] {}", ranks[i]->rank, call_text(*ranks[i])));
  }
  if (ranks.size() > listed) lines.add(kDetail, fmt::format("... ({} more ranks)", ranks.size() - listed));
}

void add_calls(Lines& lines, const RankClass& rank_class) {
  const RankSnapshot& first = *rank_class.representative;
  if (first.state == RankState::Running) return;
  const bool one_call = std::all_of(rank_class.members.begin(), rank_class.members.end(),
                                    [&](const RankSnapshot* rank) { return call_text(*rank) == call_text(first); });
  if (one_call) {
    lines.add(kDetail, call_text(first));
  } else {
    add_calls_by_rank(lines, rank_class.members);
  }
}

void add_waits_for(Lines& lines, const RankClass& rank_class) {
  const RankState state = rank_class.representative->state;
  if (state != RankState::Blocked && state != RankState::Finalizing) return;
  std::vector<std::string> waits;
  for (const RankSnapshot* rank : rank_class.members) waits.push_back(waits_for_text(*rank));
  if (std::all_of(waits.begin(), waits.end(), [&](const std::string& text) { return text == waits.front(); })) {
    if (!waits.front().empty()) lines.add(kDetail, "waits for: " + waits.front());
    return;
  }
  std::string line = "waits for: ";
  std::size_t listed = 0;
  std::size_t unlisted = 0;
  for (std::size_t i = 0; i < waits.size(); ++i) {
    if (waits[i].empty()) continue;
    if (listed == kMaxListed) {
      ++unlisted;
      continue;
    }
    line += fmt::format("{}[{}] {}", listed == 0 ? "" : "; ", rank_class.ranks[i], waits[i]);
    ++listed;
  }
  if (unlisted > 0) line += fmt::format("; ... ({} more ranks)", unlisted);
  lines.add(kDetail, line);
}

void add_frames(Lines& lines, const std::vector<Frame>& stack) {
  if (stack.empty()) {
    lines.add(kDetail, "(no stack: the rank did not answer)");
    return;
  }
  const std::size_t shown = std::min(stack.size(), kMaxFrames);
  for (std::size_t i = 0; i < shown; ++i) lines.add(kDetail, frame_text(stack[i]));
  if (stack.size() > shown) lines.add(kDetail, fmt::format("... {} more frames", stack.size() - shown));
}

// Everything under a class header: calls, what they wait for, the stack.
void add_class_body(Lines& lines, const RankClass& rank_class) {
  add_calls(lines, rank_class);
  add_waits_for(lines, rank_class);
  add_frames(lines, rank_class.representative->stack);
}

std::string wait_reason_of(const Report& report, int rank) {
  const auto found = std::find_if(report.ranks.begin(), report.ranks.end(),
                                  [&](const RankSnapshot& snapshot) { return snapshot.rank == rank; });
  if (found == report.ranks.end() || found->wait_reason.empty()) return "(unknown)";
  return found->wait_reason;
}

// "rank 0 -> rank 1 -> rank 0 (rank 0: MPI_Recv from rank 1; rank 1: ...)";
// a long cycle names its first ranks, then closes on its last.
std::string cycle_text(const Report& report) {
  const std::vector<int>& cycle = report.core.cycle;
  std::string path;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    if (i == kMaxListed && cycle.size() > kMaxListed + 1) {
      path += fmt::format(" -> ... ({} more ranks)", cycle.size() - kMaxListed - 1);
      i = cycle.size() - 1;
    }
    path += fmt::format("{}rank {}", i == 0 ? "" : " -> ", cycle[i]);
  }
  const bool closed = cycle.size() > 1 && cycle.back() == cycle.front();
  const std::size_t distinct = closed ? cycle.size() - 1 : cycle.size();
  std::string reasons;
  for (std::size_t i = 0; i < std::min(distinct, kMaxListed); ++i) {
    reasons += fmt::format("{}rank {}: {}", i == 0 ? "" : "; ", cycle[i], wait_reason_of(report, cycle[i]));
  }
  if (distinct > kMaxListed) reasons += "; ...";
  return fmt::format("{} ({})", path, reasons);
}

void add_deadlock(Lines& lines, const Report& report) {
  const DeadlockCore& core = report.core;
  if (!core.cycle.empty()) {
    lines.add(kDescription, "deadlock: " + cycle_text(report));
  } else if (!core.core.empty()) {
    lines.add(kDescription,
              fmt::format("deadlock: {} wait only for each other (any of several)", ranks_phrase(core.core)));
  }
  if (!core.blocked_behind.empty()) {
    lines.add(kDescription, "blocked behind the deadlock: " + ranks_phrase(core.blocked_behind));
  }
}

std::string partial_text(const Report& report) {
  const std::string list = compress_ranks(report.core.core);
  if (names_one_rank(list)) {
    return fmt::format("rank {} is blocked in an MPI call that only it can complete; the other ranks still run.",
                       list);
  }
  return fmt::format(
      "ranks {} are blocked in MPI calls that only each other can complete; the other ranks still run.", list);
}

void add_description(Lines& lines, const Report& report) {
  switch (report.check) {
    case Check::DeadlockHard:
      lines.add(kDescription, aborted_text(report) + ":");
      lines.add(kDescription, report.partial ? partial_text(report)
                                             : "every rank is blocked in an MPI call, waiting for another rank.");
      return;
    case Check::DeadlockPotential: {
      lines.add(kDescription,
                aborted_text(report) + " with standard sends made synchronous (CHECK GLOBAL:DEADLOCK:POTENTIAL ON):");
      lines.add(kDescription,
                "the program depends on MPI buffering to proceed: these sends complete only when MPI buffers them:");
      std::vector<const RankSnapshot*> converted;
      for (const RankSnapshot& rank : report.ranks) {
        if (rank.converted_send) converted.push_back(&rank);
      }
      add_calls_by_rank(lines, converted);
      return;
    }
    case Check::NoProgress:
      lines.add(kDescription, fmt::format("no progress was observed for over {}; the program goes on.",
                                          threshold_text(report, "on average")));
      return;
  }
}

std::string signal_name(int signal_number) {
  const char* abbreviation = sigabbrev_np(signal_number);
  return abbreviation ? fmt::format("SIG{}", abbreviation) : fmt::format("signal {}", signal_number);
}

}  // namespace

std::string format_text(const Report& report) {
  const bool warning = report.check == Check::NoProgress;
  Lines lines(warning ? "[0] WARNING: " : "[0] ERROR: ");
  lines.add(0, fmt::format("{}: {}", check_name(report.check), warning ? "warning" : "fatal error"));
  add_description(lines, report);
  add_deadlock(lines, report);
  for (const RankClass& rank_class : merge_stacks(report.ranks, report.core)) {
    lines.add(kDescription, class_label(rank_class) + " " +
                                state_text(rank_class.representative->state, duration_text(rank_class)));
    add_class_body(lines, rank_class);
  }
  return lines.take() + fmt::format("[0] INFO: {}: found 1 time ({}), 0 reports were suppressed\n",
                                    check_name(report.check),
                                    warning ? "0 errors + 1 warning" : "1 error + 0 warnings");
}

namespace {
constexpr std::string_view kSignalDumpHeadline = "LOCAL:EXIT:SIGNAL: fatal error";
}

std::string format_signal_dump(const RankSnapshot& rank, int signal_number) {
  Lines lines(fmt::format("[{}] ERROR: ", rank.rank));
  lines.add(0, std::string(kSignalDumpHeadline));
  const std::string duration = tenths(rank.seconds) + " s";
  const std::string doing = rank.state == RankState::Polling
                                ? fmt::format("polling with MPI call, without progress for {}:", duration)
                                : state_text(rank.state, duration);
  lines.add(kDescription, fmt::format("rank {} (host {}, pid {}) received {} while {}", rank.rank, rank.host,
                                      rank.pid, signal_name(signal_number), doing));
  add_class_body(lines, RankClass{{rank.rank}, &rank, {&rank}});
  return lines.take();
}

std::size_t count_signal_dumps(std::string_view report_text) {
  const std::string headline = fmt::format("] ERROR: {}\n", kSignalDumpHeadline);
  std::size_t count = 0;
  for (std::size_t at = report_text.find(headline); at != std::string_view::npos;
       at = report_text.find(headline, at + headline.size()))
    ++count;
  return count;
}

}  // namespace mpisentry::report
