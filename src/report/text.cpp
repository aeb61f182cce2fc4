// ITC's report shape (shared/reference/itc-checker.md §3): rank 0 prints one block for
// the whole job, every line prefixed "[0] ERROR: ", ranks merged into classes
// so that a thousand ranks still fit on a screen.
#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "report/hosts.hpp"
#include "report/report.hpp"

namespace mpisentry::report {
namespace {

// Longer lists of ranks, calls or reasons name this many, then count the rest.
constexpr std::size_t kMaxListed = 8;
constexpr std::size_t kMaxFrames = 32;

// Spaces after the line prefix, as ITC indents: descriptions and class
// headers, then the calls, waits-for lines and frames beneath them; in ranks
// of several threads, each thread's own beneath its call.
constexpr int kDescription = 3;
constexpr int kDetail = 6;
constexpr int kThreadDetail = 9;  // a thread's waits and stack, under its call

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
  if (report.proven_at_once)
    return "Application aborted because a deadlock was proven, in two looks, without waiting for a timeout "
           "(DEADLOCK-TIMEOUT auto)";
  return "Application aborted because no progress was observed for over " + threshold_text(report);
}

std::string tenths(double seconds) { return fmt::format("{:.1f}", seconds); }

// "rank 3" or "ranks 0-2,5".
std::string ranks_phrase(const RankSet& ranks) { return (ranks.size() == 1 ? "rank " : "ranks ") + to_string(ranks); }
std::string ranks_phrase(const std::vector<int>& ranks) { return ranks_phrase(RankSet(ranks)); }

const std::string& call_text(const ThreadSnapshot& thread) {
  return thread.call.empty() ? thread.function : thread.call;
}

// "rank 1", "ranks 1-3 (all of them)", "any of ranks 0-3"; empty when the
// thread waits for no known rank.
std::string waits_for_text(const ThreadSnapshot& thread) {
  RankSet ranks = thread.waits_for;
  for (const StartedCollective& started : thread.started_collectives) ranks.add_all(started.waits_for);
  if (ranks.size() <= 1) return ranks.empty() ? std::string() : ranks_phrase(ranks);
  const std::string list = to_string(ranks);
  return thread.wait_mode == WaitMode::Any ? "any of ranks " + list : "ranks " + list + " (all of them)";
}

// The collective (or other call) whose synchronization a possible wait assumes.
const std::string& synchronizing_function(const ThreadSnapshot& thread) {
  return thread.collective.function.empty() ? thread.function : thread.collective.function;
}

// "rank 2 (if MPI_Bcast synchronizes)"; empty when there is no possible wait.
std::string possibly_waits_for_text(const ThreadSnapshot& thread) {
  std::vector<std::string> parts;
  if (!thread.possibly_waits_for.empty())
    parts.push_back(fmt::format("{} (if {} synchronizes)", ranks_phrase(thread.possibly_waits_for),
                                synchronizing_function(thread)));
  for (const StartedCollective& started : thread.started_collectives)
    if (!started.possibly_waits_for.empty())
      parts.push_back(fmt::format("{} (if {} synchronizes)", ranks_phrase(started.possibly_waits_for),
                                  started.call.function));
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string frame_text(const Frame& frame) {
  if (!frame.file.empty()) {
    return frame.line > 0 ? fmt::format("{} ({}:{})", frame.function, frame.file, frame.line)
                          : fmt::format("{} ({})", frame.function, frame.file);
  }
  if (!frame.module.empty()) return fmt::format("{} ({})", frame.function, frame.module);
  return frame.function;
}

// What a class header says a rank is doing; `duration` like "5.2 s". A rank
// of several threads is blocked when all of them are, running when one runs.
std::string state_text(RankState state, const std::string& duration, std::size_t threads) {
  if (threads > 1) {
    switch (state) {
      case RankState::Blocked:
      case RankState::Finalizing: return fmt::format("blocked for {} in MPI calls of {} threads:", duration, threads);
      case RankState::Polling: return fmt::format("no progress for {} in {} threads:", duration, threads);
      case RankState::Running: return fmt::format("running, {} threads:", threads);
    }
  }
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

// The first items of a list, one a line, then how many more `things` there are.
void add_listed(Lines& lines, int indent, const std::vector<std::string>& items, std::string_view things) {
  const std::size_t listed = std::min(items.size(), kMaxListed);
  for (std::size_t i = 0; i < listed; ++i) lines.add(indent, items[i]);
  if (items.size() > listed) lines.add(indent, fmt::format("... ({} more {})", items.size() - listed, things));
}

// The same thread (by position, hence by id) of every rank of a class.
struct ThreadGroup {
  const std::vector<int>* ranks = nullptr;  // the class's ranks
  std::vector<const ThreadSnapshot*> threads;  // in the order of ranks
  const ThreadSnapshot& first() const { return *threads.front(); }
};

std::vector<ThreadGroup> thread_groups(const RankClass& rank_class) {
  std::vector<ThreadGroup> groups(rank_class.representative->threads.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    groups[i].ranks = &rank_class.ranks;
    for (const RankSnapshot* rank : rank_class.members) groups[i].threads.push_back(&rank->threads[i]);
  }
  return groups;
}

bool one_call(const ThreadGroup& group) {
  return std::all_of(group.threads.begin(), group.threads.end(),
                     [&](const ThreadSnapshot* thread) { return call_text(*thread) == call_text(group.first()); });
}

void add_calls_by_rank(Lines& lines, int indent, const ThreadGroup& group) {
  std::vector<std::string> calls;
  for (std::size_t i = 0; i < group.threads.size(); ++i) {
    calls.push_back(fmt::format("[{}] {}", (*group.ranks)[i], call_text(*group.threads[i])));
  }
  add_listed(lines, indent, calls, "ranks");
}

// A "waits for: " or "may also wait for: " line: one text when the group
// agrees, else each rank's own.
template <typename WaitText>
void add_waits(Lines& lines, int indent, const ThreadGroup& group, std::string_view label, WaitText wait_text) {
  const RankState state = group.first().state;
  if (state != RankState::Blocked && state != RankState::Finalizing) return;
  std::vector<std::string> waits;
  for (const ThreadSnapshot* thread : group.threads) waits.push_back(wait_text(*thread));
  if (std::all_of(waits.begin(), waits.end(), [&](const std::string& text) { return text == waits.front(); })) {
    if (!waits.front().empty()) lines.add(indent, std::string(label) + waits.front());
    return;
  }
  std::string line(label);
  std::size_t listed = 0;
  std::size_t unlisted = 0;
  for (std::size_t i = 0; i < waits.size(); ++i) {
    if (waits[i].empty()) continue;
    if (listed == kMaxListed) {
      ++unlisted;
      continue;
    }
    line += fmt::format("{}[{}] {}", listed == 0 ? "" : "; ", (*group.ranks)[i], waits[i]);
    ++listed;
  }
  if (unlisted > 0) line += fmt::format("; ... ({} more ranks)", unlisted);
  lines.add(indent, line);
}

void add_frames(Lines& lines, int indent, const std::vector<Frame>& stack) {
  if (stack.empty()) {
    lines.add(indent, "(no stack: the rank did not answer)");
    return;
  }
  const std::size_t shown = std::min(stack.size(), kMaxFrames);
  for (std::size_t i = 0; i < shown; ++i) lines.add(indent, frame_text(stack[i]));
  if (stack.size() > shown) lines.add(indent, fmt::format("... {} more frames", stack.size() - shown));
}

// What the group waits for, definitely and possibly, and its stack.
void add_waits_and_frames(Lines& lines, int indent, const ThreadGroup& group) {
  add_waits(lines, indent, group, "waits for: ", waits_for_text);
  add_waits(lines, indent, group, "may also wait for: ", possibly_waits_for_text);
  add_frames(lines, indent, group.first().stack);
}

// The only thread of the ranks: its call, or each rank's, under the header.
void add_only_thread(Lines& lines, const ThreadGroup& group) {
  if (group.first().state != RankState::Running) {
    if (one_call(group)) {
      lines.add(kDetail, call_text(group.first()));
    } else {
      add_calls_by_rank(lines, kDetail, group);
    }
  }
  add_waits_and_frames(lines, kDetail, group);
}

// "thread 1: MPI_Recv(...)", then the thread's waits and stack beneath it.
void add_one_of_threads(Lines& lines, const ThreadGroup& group) {
  const ThreadSnapshot& first = group.first();
  const std::string label = fmt::format("thread {}:", first.id);
  const char* polling = first.state == RankState::Polling ? " polling with" : "";
  if (first.state == RankState::Running) {
    lines.add(kDetail, label + " running outside MPI, now at:");
  } else if (one_call(group)) {
    lines.add(kDetail, fmt::format("{}{} {}", label, polling, call_text(first)));
  } else {
    lines.add(kDetail, label + polling);
    add_calls_by_rank(lines, kThreadDetail, group);
  }
  add_waits_and_frames(lines, kThreadDetail, group);
}

// Everything under a class header: calls, what they wait for, the stacks.
void add_class_body(Lines& lines, const RankClass& rank_class) {
  const std::vector<ThreadGroup> groups = thread_groups(rank_class);
  if (groups.empty()) {
    add_frames(lines, kDetail, {});
  } else if (groups.size() == 1) {
    add_only_thread(lines, groups.front());
  } else {
    for (const ThreadGroup& group : groups) add_one_of_threads(lines, group);
  }
}

// Where a thread of the program is: its innermost frame.
std::string place_text(const ThreadSnapshot& thread) {
  return thread.stack.empty() ? "an unknown place (no stack)" : frame_text(thread.stack.front());
}

// Whether the thread's stack still holds the program's main (C, C++) or
// main program (Fortran): once main returned, exit() runs below it.
bool main_on_stack(const ThreadSnapshot& thread) {
  return std::any_of(thread.stack.begin(), thread.stack.end(),
                     [](const Frame& frame) { return frame.function == "main" || frame.function == "MAIN__"; });
}

// The first of the rank's threads that runs outside MPI, else its first thread.
const ThreadSnapshot* running_thread(const RankSnapshot& rank) {
  for (const ThreadSnapshot& thread : rank.threads)
    if (thread.state == RankState::Running) return &thread;
  return rank.threads.empty() ? nullptr : &rank.threads.front();
}

// "where: host node1: ranks 0-3 (pids 4101-4104)", first under a class header.
void add_where(Lines& lines, const RankClass& rank_class) {
  lines.add(kDetail, "where: " + where_text(rank_class.members));
}

void add_class(Lines& lines, const RankClass& rank_class) {
  const RankSnapshot& first = *rank_class.representative;
  if (first.exit_status == RankSnapshot::kNotExiting) {
    lines.add(kDescription, class_label(rank_class) + " " +
                                state_text(first.state, duration_text(rank_class), first.threads.size()));
    add_where(lines, rank_class);
    add_class_body(lines, rank_class);
    return;
  }
  const std::string exited = fmt::format("{} exited with status {} without MPI_Finalize", class_label(rank_class),
                                         first.exit_status);
  const ThreadSnapshot* thread = running_thread(first);
  if (first.threads.size() <= 1 && (thread == nullptr || !main_on_stack(*thread))) {
    lines.add(kDescription, exited + ", after main returned");
    add_where(lines, rank_class);
    return;
  }
  lines.add(kDescription, exited + ", at:");
  add_where(lines, rank_class);
  add_class_body(lines, rank_class);
}

// "rank 0" or, for a rank of several threads, "rank 0 thread 1".
std::string thread_name(const RankSnapshot& rank, int thread) {
  return rank.threads.size() > 1 ? fmt::format("rank {} thread {}", rank.rank, thread) : fmt::format("rank {}", rank.rank);
}

// Why `rank` waits for `next` in the cycle: the wait reason of its thread
// whose arc the analysis followed to `next`, else of its first thread that
// gives one.
std::string wait_reason_in_cycle(const Report& report, int rank, int next) {
  const RankSnapshot* snapshot = find_rank(report.ranks, rank);
  if (snapshot == nullptr) return fmt::format("rank {}: (unknown)", rank);
  const auto arc = std::find_if(report.arcs.begin(), report.arcs.end(), [&](const WaitArc& candidate) {
    return candidate.from.rank == rank && candidate.to == next;
  });
  const auto has_reason = [&](const ThreadSnapshot& thread) {
    return !thread.wait_reason.empty() && (arc == report.arcs.end() || thread.id == arc->from.thread);
  };
  const auto thread = std::find_if(snapshot->threads.begin(), snapshot->threads.end(), has_reason);
  if (thread == snapshot->threads.end()) return fmt::format("rank {}: (unknown)", rank);
  return fmt::format("{}: {}", thread_name(*snapshot, thread->id), thread->wait_reason);
}

// "rank 0 -> rank 1 -> rank 0 (rank 0: MPI_Recv from rank 1; rank 1: ...)";
// a long cycle names its first ranks, then closes on its last. A deadlock
// with ranks off the cycle (a knot, cycles that share ranks) names them too.
std::string cycle_text(const Report& report, const DeadlockCycle& deadlock) {
  const std::vector<int>& cycle = deadlock.cycle;
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
    const int next = cycle[(i + 1) % cycle.size()];
    reasons += fmt::format("{}{}", i == 0 ? "" : "; ", wait_reason_in_cycle(report, cycle[i], next));
  }
  if (distinct > kMaxListed) reasons += "; ...";
  std::vector<int> on_cycle = cycle, off_cycle;
  std::sort(on_cycle.begin(), on_cycle.end());
  std::set_difference(deadlock.ranks.begin(), deadlock.ranks.end(), on_cycle.begin(), on_cycle.end(),
                      std::back_inserter(off_cycle));
  const std::string others =
      off_cycle.empty() ? ""
                        : fmt::format("; {} {} in it too, on other cycles among {}", ranks_phrase(off_cycle),
                                      off_cycle.size() == 1 ? "waits" : "wait", ranks_phrase(deadlock.ranks));
  return fmt::format("{} ({}){}", path, reasons, others);
}

// A "deadlock: " line for each deadlock, the first kMaxListed of many, then
// the ranks blocked behind them.
void add_deadlock(Lines& lines, const Report& report) {
  const DeadlockCore& core = report.core;
  const std::size_t listed = std::min(core.cycles.size(), kMaxListed);
  for (std::size_t i = 0; i < listed; ++i) lines.add(kDescription, "deadlock: " + cycle_text(report, core.cycles[i]));
  if (core.cycles.size() > listed) {
    std::vector<int> rest;
    for (std::size_t i = listed; i < core.cycles.size(); ++i)
      rest.insert(rest.end(), core.cycles[i].ranks.begin(), core.cycles[i].ranks.end());
    lines.add(kDescription, fmt::format("deadlock: ... ({} more deadlocks, among {})", core.cycles.size() - listed,
                                        ranks_phrase(rest)));
  }
  if (!core.blocked_behind.empty()) {
    lines.add(kDescription, fmt::format("blocked behind the deadlock{}: {}", core.cycles.size() > 1 ? "s" : "",
                                        ranks_phrase(core.blocked_behind)));
  }
}

std::string partial_text(const Report& report) {
  const std::string list = compress_ranks(report.core.core);
  if (report.core.core.size() == 1) {
    return fmt::format("rank {} is blocked in an MPI call that only it can complete; the other ranks still run.",
                       list);
  }
  return fmt::format(
      "ranks {} are blocked in MPI calls that only each other can complete; the other ranks still run.", list);
}

// "[0] MPI_Send(dest=1)" for each send the potential-deadlock mode made
// synchronous; "[0] thread 1: ..." in ranks of several threads.
std::vector<std::string> converted_sends(const Report& report) {
  std::vector<std::string> sends;
  for (const RankSnapshot& rank : report.ranks) {
    for (const ThreadSnapshot& thread : rank.threads) {
      if (!thread.converted_send) continue;
      const std::string thread_label = rank.threads.size() > 1 ? fmt::format("thread {}: ", thread.id) : "";
      sends.push_back(fmt::format("[{}] {}{}", rank.rank, thread_label, call_text(thread)));
    }
  }
  return sends;
}

// "rank 1 in MPI_Bcast waits for rank 2 (if MPI_Bcast synchronizes)" for
// each possible wait the analysis used inside the core (anywhere when it
// names no core).
std::string possible_waits_used(const Report& report) {
  const std::vector<int>& core = report.core.core;
  std::vector<std::string> waits;
  for (const WaitArc& arc : report.arcs) {
    if (!arc.possible) continue;
    const bool in_core = std::find(core.begin(), core.end(), arc.from.rank) != core.end() &&
                         std::find(core.begin(), core.end(), arc.to) != core.end();
    if (!core.empty() && !in_core) continue;
    const RankSnapshot* rank = find_rank(report.ranks, arc.from.rank);
    const ThreadSnapshot* thread = rank == nullptr ? nullptr : find_thread(*rank, arc.from.thread);
    if (thread == nullptr) {
      waits.push_back(fmt::format("rank {} waits for rank {}", arc.from.rank, arc.to));
      continue;
    }
    const std::string& function = synchronizing_function(*thread);
    waits.push_back(fmt::format("{} in {} waits for rank {} (if {} synchronizes)", thread_name(*rank, thread->id),
                                function, arc.to, function));
  }
  if (waits.empty()) return "(the analysis named none)";
  std::string text;
  for (std::size_t i = 0; i < std::min(waits.size(), kMaxListed); ++i) text += (i == 0 ? "" : "; ") + waits[i];
  if (waits.size() > kMaxListed) text += fmt::format("; ... ({} more)", waits.size() - kMaxListed);
  return text;
}

// "a, b and c"; at most kMaxListed, then how many more.
std::string and_list(const std::vector<std::string>& items) {
  std::string text;
  const std::size_t listed = std::min(items.size(), kMaxListed);
  for (std::size_t i = 0; i < listed; ++i)
    text += (i == 0 ? "" : i + 1 == listed && items.size() == listed ? " and " : ", ") + items[i];
  if (items.size() > listed) text += fmt::format(" and {} more", items.size() - listed);
  return text;
}

void add_unique(std::vector<std::string>& items, std::string item) {
  if (std::find(items.begin(), items.end(), item) == items.end()) items.push_back(std::move(item));
}

// "ranks 1-3 have waited 0:05 in MPI_Allreduce for rank 0, which runs outside
// MPI at spin (outside.c:14)".
std::string outside_mpi_text(const Report& report) {
  double waited = std::numeric_limits<double>::infinity();
  std::vector<std::string> functions;
  for (int rank : report.waiting) {
    const RankSnapshot* snapshot = find_rank(report.ranks, rank);
    if (snapshot == nullptr) continue;
    waited = std::min(waited, snapshot->seconds);
    for (const ThreadSnapshot& thread : snapshot->threads)
      if (thread.state == RankState::Blocked || thread.state == RankState::Finalizing)
        add_unique(functions, thread.function);
  }
  std::vector<std::string> places;
  for (int rank : report.culprits) {
    const RankSnapshot* snapshot = find_rank(report.ranks, rank);
    const ThreadSnapshot* thread = snapshot == nullptr ? nullptr : running_thread(*snapshot);
    add_unique(places, thread == nullptr ? "an unknown place (no stack)" : place_text(*thread));
  }
  const bool one_waits = report.waiting.size() == 1;
  const bool one_culprit = report.culprits.size() == 1;
  return fmt::format("{} {} waited {} in {} for {}, which {} outside MPI at {}", ranks_phrase(report.waiting),
                     one_waits ? "has" : "have", minutes(waited), and_list(functions), ranks_phrase(report.culprits),
                     one_culprit ? "runs" : "run", and_list(places));
}

// "at leave_early (early_exit.c:9)", or "after main returned".
std::string exit_place(const RankSnapshot& rank) {
  const ThreadSnapshot* thread = running_thread(rank);
  if (thread == nullptr || !main_on_stack(*thread)) return "after main returned";
  return "at " + frame_text(thread->stack.front());
}

void add_description(Lines& lines, const Report& report) {
  switch (report.check) {
    case Check::DeadlockHard:
      lines.add(kDescription, aborted_text(report) + ":");
      lines.add(kDescription, report.partial ? partial_text(report)
                                             : "every rank is blocked in an MPI call, waiting for another rank.");
      return;
    case Check::DeadlockPotential:
      lines.add(kDescription,
                aborted_text(report) + " with standard sends made synchronous (CHECK GLOBAL:DEADLOCK:POTENTIAL ON):");
      lines.add(kDescription,
                "the program depends on MPI buffering to proceed: these sends complete only when MPI buffers them:");
      add_listed(lines, kDetail, converted_sends(report), "sends");
      return;
    case Check::NoProgress:
      lines.add(kDescription, fmt::format("no progress was observed for over {}; the program goes on.",
                                          threshold_text(report, "on average")));
      return;
    case Check::Unsafe:
      lines.add(kDescription,
                fmt::format("no progress was observed for over {}; the program goes on.", threshold_text(report)));
      lines.add(kDescription, "the ranks wait in a cycle that needs a wait only some MPI implementations make: " +
                                  possible_waits_used(report));
      return;
    case Check::OutsideMpi:
      lines.add(kDescription, outside_mpi_text(report) + "; the program goes on.");
      return;
    case Check::ExitBeforeFinalize:
      for (const RankSnapshot& rank : report.ranks)
        if (rank.exit_status != RankSnapshot::kNotExiting)
          lines.add(kDescription, fmt::format("rank {} exited with status {} without calling MPI_Finalize, {}; MPI "
                                              "ends the job.",
                                              rank.rank, rank.exit_status, exit_place(rank)));
      return;
    case Check::Dump:
      lines.add(kDescription, fmt::format("{} asked every rank for its state (DUMP-SIGNAL); the program goes on.",
                                          signal_name(report.signal_number)));
      if (!report.culprits.empty()) lines.add(kDescription, outside_mpi_text(report) + ".");
      return;
    default:  // one rank's own report: format_signal_dump, format_finding
      return;
  }
}

std::string line_prefix(Severity severity, int rank = 0) {
  switch (severity) {
    case Severity::Fatal:
    case Severity::Error: return fmt::format("[{}] ERROR: ", rank);
    case Severity::Warning: return fmt::format("[{}] WARNING: ", rank);
    case Severity::Info: return fmt::format("[{}] INFO: ", rank);
  }
  return fmt::format("[{}] ERROR: ", rank);
}

std::string headline(Check check) {
  switch (severity(check)) {
    case Severity::Fatal: return fmt::format("{}: fatal error", check_name(check));
    case Severity::Error: return fmt::format("{}: error", check_name(check));
    case Severity::Warning: return fmt::format("{}: warning", check_name(check));
    case Severity::Info: return fmt::format("{}: {}", check_name(check), check == Check::Dump ? "on request" : "information");
  }
  return check_name(check);
}

}  // namespace

std::string format_text(const Report& report) {
  const Severity level = severity(report.check);
  Lines lines(line_prefix(level));
  lines.add(0, headline(report.check));
  add_description(lines, report);
  if (!report.rule.empty()) lines.add(kDescription, "rule: " + report.rule);
  add_deadlock(lines, report);
  for (const RankClass& rank_class : merge_stacks(report.ranks, leading_ranks(report))) add_class(lines, rank_class);
  if (level == Severity::Info) return lines.take();
  return lines.take() + fmt::format("[0] INFO: {}: found 1 time ({}), 0 reports were suppressed\n",
                                    check_name(report.check),
                                    level == Severity::Fatal ? "1 error + 0 warnings" : "0 errors + 1 warning");
}

std::string format_signal_dump(const RankSnapshot& rank, int signal_number, std::string_view fault_address) {
  Lines lines(fmt::format("[{}] ERROR: ", rank.rank));
  lines.add(0, headline(Check::ExitSignal));
  const std::string duration = tenths(rank.seconds) + " s";
  const std::string doing = rank.state == RankState::Polling && rank.threads.size() <= 1
                                ? fmt::format("polling with MPI call, without progress for {}:", duration)
                                : state_text(rank.state, duration, rank.threads.size());
  const std::string fault = fault_address.empty() ? "" : fmt::format(" (fault at address {})", fault_address);
  lines.add(kDescription, fmt::format("rank {} (host {}, pid {}) received {}{} while {}", rank.rank, rank.host,
                                      rank.pid, signal_name(signal_number), fault, doing));
  add_class_body(lines, RankClass{{rank.rank}, &rank, {&rank}});
  return lines.take();
}

std::string format_rank_lost(const RankSnapshot& rank, const std::vector<std::string>& lost, bool with_stacks) {
  Lines lines(line_prefix(severity(Check::RankLost), rank.rank));
  lines.add(0, headline(Check::RankLost));
  for (const std::string& line : lost) lines.add(kDescription, line);
  const RankClass own{{rank.rank}, &rank, {&rank}};
  if (with_stacks) {
    add_class(lines, own);
    return lines.take();
  }
  // In the moments a launcher may leave: the calls and waits, no stacks.
  lines.add(kDescription, class_label(own) + " " + state_text(rank.state, tenths(rank.seconds) + " s", rank.threads.size()));
  add_where(lines, own);
  for (const ThreadSnapshot& thread : rank.threads) {
    const std::string label = rank.threads.size() > 1 ? fmt::format("thread {}: ", thread.id) : "";
    if (thread.state == RankState::Running) {
      lines.add(kDetail, label + "outside MPI");
      continue;
    }
    lines.add(kDetail, label + call_text(thread));
    if (const std::string waits = waits_for_text(thread); !waits.empty()) lines.add(kDetail, "waits for: " + waits);
  }
  return lines.take();
}

std::string format_finding(const Finding& finding) {
  Lines lines(line_prefix(severity(finding.check), finding.rank));
  lines.add(0, headline(finding.check));
  for (const std::string& line : finding.summary) lines.add(kDescription, line);
  for (const Finding::Party& party : finding.parties) {
    lines.add(kDescription, fmt::format("{} {}:", ranks_phrase(party.ranks), party.role));
    if (!party.call.empty()) lines.add(kDetail, party.call);
    if (!party.stack.empty()) add_frames(lines, kDetail, party.stack);
  }
  return lines.take();
}

std::string format_summary(int rank, const CheckCounts (&counts)[kCheckCount]) {
  std::string out;
  std::int64_t errors = 0, warnings = 0, suppressed = 0;
  for (int i = 0; i < kCheckCount; ++i) {
    const CheckCounts& count = counts[i];
    if ((count.found == 0 && count.suppressed == 0) || severity(static_cast<Check>(i)) == Severity::Info) continue;  // not a problem
    const bool warning = severity(static_cast<Check>(i)) == Severity::Warning;
    (warning ? warnings : errors) += count.found;
    suppressed += count.suppressed;
    fmt::format_to(std::back_inserter(out), "[{}] INFO: {}: found {} time{} ({} error{} + {} warning{}), {} report{} {} suppressed\n",
                   rank, check_name(static_cast<Check>(i)), count.found, count.found == 1 ? "" : "s",
                   warning ? 0 : count.found, !warning && count.found == 1 ? "" : "s", warning ? count.found : 0,
                   warning && count.found == 1 ? "" : "s", count.suppressed, count.suppressed == 1 ? "" : "s",
                   count.suppressed == 1 ? "was" : "were");
  }
  if (out.empty()) return out;
  const std::int64_t problems = errors + warnings;
  fmt::format_to(std::back_inserter(out), "[{}] INFO: Found {} problem{} ({} error{} + {} warning{}), {} report{} {} suppressed.\n",
                 rank, problems, problems == 1 ? "" : "s", errors, errors == 1 ? "" : "s", warnings,
                 warnings == 1 ? "" : "s", suppressed, suppressed == 1 ? "" : "s", suppressed == 1 ? "was" : "were");
  return out;
}

}  // namespace mpisentry::report
