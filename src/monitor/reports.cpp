#include "monitor/reports.hpp"

#include <chrono>

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
  report.threshold_seconds = to_seconds(after_warning ? settings.deadlock_warning : settings.deadlock_timeout);
  report.threshold_key = after_warning ? "DEADLOCK-WARNING" : "DEADLOCK-TIMEOUT";
  add_arcs(report, ranks, {to_seconds(settings.deadlock_timeout), verdict.with_possible_waits});
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

}  // namespace mpisentry::monitor::reports
