#include "monitor/reports.hpp"

#include <chrono>
#include <ctime>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace mpisentry::monitor::reports {
namespace {

// The arcs a report lists, at most this many (about 60 MB of JSON): k
// members of a collective that P - k ranks have not joined wait for
// k x (P - k) arcs, which no report can hold at 100,000 ranks.
constexpr std::size_t kMaxReportedArcs = 1'000'000;

void add_arcs(report::Report& report, const std::vector<RankSnapshot>& ranks, const waitgraph::Options& options) {
  waitgraph::ArcList listed = waitgraph::effective_arcs(ranks, options, kMaxReportedArcs);
  report.arcs = std::move(listed.arcs);
  report.arcs_left_out = listed.left_out;
}

}  // namespace

report::Check check_of(const Verdict& verdict, const std::vector<RankSnapshot>& ranks, bool check_potential) {
  switch (verdict.kind) {
    case Verdict::Kind::Slow: return report::Check::NoProgress;
    case Verdict::Kind::Unsafe: return report::Check::Unsafe;
    default: break;
  }
  if (!check_potential) return report::Check::DeadlockHard;
  for (int rank : verdict.involved)
    for (const ThreadSnapshot& thread : ranks[static_cast<std::size_t>(rank)].threads)
      if (thread.converted_send) return report::Check::DeadlockPotential;
  return report::Check::DeadlockHard;
}

report::Report verdict_report(const Verdict& verdict, double seconds_between, std::vector<RankSnapshot> ranks,
                              const config::Settings& settings) {
  const report::Check check = check_of(verdict, ranks, settings.check_potential);
  const bool after_warning = check == report::Check::NoProgress;
  report::Report report;
  report.check = check;
  report.partial = verdict.partial;
  report.core = verdict.core;
  report.rule = verdict.rule;
  if (seconds_between > 0)
    report.rule += fmt::format("; seen in two looks {:.1f} s apart with no progress in between", seconds_between);
  // A verdict proven whatever the time waits for no DEADLOCK-TIMEOUT under auto.
  const config::Duration waited = verdict.with_possible_waits ? config::any_verdict_after(settings.deadlock_timeout)
                                                              : config::proven_after(settings.deadlock_timeout);
  report.proven_at_once = settings.deadlock_timeout.automatic && !after_warning && !verdict.with_possible_waits;
  report.threshold_seconds = to_seconds(after_warning ? settings.deadlock_warning : waited);
  report.threshold_key = after_warning ? "DEADLOCK-WARNING" : "DEADLOCK-TIMEOUT";
  add_arcs(report, ranks, {to_seconds(waited), verdict.with_possible_waits});
  report.ranks = std::move(ranks);
  return report;
}

Verdict no_progress_verdict() {
  Verdict verdict;
  verdict.kind = Verdict::Kind::Slow;
  verdict.rule = "the ranks call MPI without completing anything (polling), on average for longer than "
                 "DEADLOCK-WARNING";
  return verdict;
}

report::Report dump_report(std::vector<RankSnapshot> ranks, const config::Settings& settings) {
  report::Report report;
  report.check = report::Check::Dump;
  report.threshold_key = "";
  report.signal_number = settings.dump_signal;
  report.rule = fmt::format("DUMP-SIGNAL {} reached a rank; each rank's state is as its monitor saw it in the "
                            "round that followed",
                            report::signal_name(settings.dump_signal));
  add_arcs(report, ranks, {0, /*with_possible_waits=*/true});
  const waitgraph::OutsideMpi outside = waitgraph::find_outside_mpi(ranks, 0);
  report.waiting = outside.waiting;
  report.culprits = outside.culprits;
  report.ranks = std::move(ranks);
  return report;
}

report::Report outside_mpi_report(std::vector<RankSnapshot> ranks, const waitgraph::OutsideMpi& outside,
                                  const config::Settings& settings) {
  report::Report report;
  report.check = report::Check::OutsideMpi;
  report.rule = "ranks blocked in MPI for longer than DEADLOCK-WARNING wait, directly or through other blocked "
                "ranks, for ranks that make no MPI call (they compute, sleep or wait outside MPI); not a deadlock";
  report.threshold_seconds = to_seconds(settings.deadlock_warning);
  report.threshold_key = "DEADLOCK-WARNING";
  add_arcs(report, ranks, {0, /*with_possible_waits=*/true});
  report.waiting = outside.waiting;
  report.culprits = outside.culprits;
  report.ranks = std::move(ranks);
  return report;
}

std::string outside_mpi_signature(const waitgraph::OutsideMpi& outside, const std::vector<RankSnapshot>& ranks) {
  std::string signature = fmt::format("{}|", fmt::join(outside.culprits, ","));
  for (int rank : outside.culprits) {
    for (const ThreadSnapshot& thread : ranks[static_cast<std::size_t>(rank)].threads) {
      const std::size_t innermost = thread.stack.size() > 1 ? 1 : 0;
      for (std::size_t frame = innermost; frame < thread.stack.size(); ++frame)
        signature += thread.stack[frame].function + ';';
      signature += '|';
    }
  }
  return signature;
}

report::Report exit_report(std::vector<RankSnapshot> ranks) {
  report::Report report;
  report.check = report::Check::ExitBeforeFinalize;
  report.threshold_key = "";
  report.rule = "a rank called exit() or returned from main after MPI_Init without calling MPI_Finalize";
  add_arcs(report, ranks, {0, /*with_possible_waits=*/true});
  report.ranks = std::move(ranks);
  return report;
}

report::Report signal_dump_report(const RankSnapshot& rank, int signal_number) {
  report::Report report;
  report.check = report::Check::ExitSignal;
  report.threshold_key = "";
  report.signal_number = signal_number;
  report.ranks = {rank};
  return report;
}

namespace {

// "2026-12-01 22:31:05.123", local time.
std::string wall_time(std::int64_t epoch_ms) {
  const std::time_t seconds = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[32] = {};
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &local);
  return fmt::format("{}.{:03}", text, epoch_ms % 1000);
}

}  // namespace

std::vector<std::string> lost_rank_lines(const LostRank& lost, const std::string& process_state,
                                         double silence_seconds) {
  std::vector<std::string> lines;
  const std::string who = fmt::format("rank {} (host {}, pid {})", lost.rank, lost.host, lost.pid);
  const std::string here = process_state.empty() ? "" : fmt::format("; on its host now: {}", process_state);
  if (lost.how == LostRank::How::Silent)
    lines.push_back(fmt::format(
        "{} fell silent: its monitor said nothing for {:.1f} s (DEADLOCK-WARNING) until {}, seen by rank {}: the "
        "process is stopped (SIGSTOP), its node froze, or it sleeps in the kernel{}; it may still go on, so "
        "nothing is claimed of it",
        who, silence_seconds, wall_time(lost.at_ms), lost.noticed_by, here));
  else
    lines.push_back(fmt::format(
        "{} ended at {}, seen by rank {}: its monitor's connection closed without a word, so the process died "
        "(SIGKILL, what the OOM killer sends, leaves no trace in it; a signal mpisentry handles, MPI_Abort "
        "and exit() would have said so){}",
        who, wall_time(lost.at_ms), lost.noticed_by, here));
  lines.push_back(lost.last_state.empty()
                      ? fmt::format("rank {} had reported no state yet", lost.rank)
                      : fmt::format("rank {} last reported, {:.1f} s before: {}", lost.rank, lost.state_age_seconds,
                                    lost.last_state));
  lines.push_back(
      "checking for deadlocks ends here, with no verdict: the launcher ends the job, or it waits; this rank's "
      "state:");
  return lines;
}

report::Report rank_lost_report(const RankSnapshot& rank, const std::vector<std::string>& lines) {
  report::Report report;
  report.check = report::Check::RankLost;
  report.threshold_key = "DEADLOCK-WARNING";
  report.rule = fmt::format("{}", fmt::join(lines, "; "));
  report.ranks = {rank};
  return report;
}

}  // namespace mpisentry::monitor::reports
