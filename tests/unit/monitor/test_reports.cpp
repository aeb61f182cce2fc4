// The monitor's reports, built from made-up ranks: check, rule, threshold, arcs.
#include <catch2/catch.hpp>

#include "monitor/reports.hpp"

using namespace mpisentry;
using namespace mpisentry::monitor;
using namespace std::chrono_literals;

namespace {

RankSnapshot blocked_recv(int rank, int source, bool converted_send = false) {
  RankSnapshot snapshot;
  snapshot.rank = rank;
  snapshot.state = RankState::Blocked;
  snapshot.seconds = 20;
  ThreadSnapshot thread;
  thread.state = RankState::Blocked;
  thread.seconds = 20;
  thread.function = converted_send ? "MPI_Send" : "MPI_Recv";
  thread.wait_mode = WaitMode::All;
  thread.waits_for = {source};
  thread.converted_send = converted_send;
  snapshot.threads = {thread};
  return snapshot;
}

Verdict hard_cycle() {
  Verdict verdict;
  verdict.kind = Verdict::Kind::Hard;
  verdict.rule = "a cycle";
  verdict.core.core = {0, 1};
  verdict.involved = {0, 1};
  return verdict;
}

config::Settings settings() {
  config::Settings settings;
  settings.deadlock_timeout = mpisentry::config::Timeout{false, 20s};
  settings.deadlock_warning = 300s;
  return settings;
}

}  // namespace

TEST_CASE("a confirmed cycle is HARD, or POTENTIAL when a converted send is in it", "[reports]") {
  const std::vector<RankSnapshot> plain = {blocked_recv(0, 1), blocked_recv(1, 0)};
  const std::vector<RankSnapshot> converted = {blocked_recv(0, 1), blocked_recv(1, 0, true)};
  CHECK(reports::check_of(hard_cycle(), converted, false) == report::Check::DeadlockHard);
  CHECK(reports::check_of(hard_cycle(), plain, true) == report::Check::DeadlockHard);
  CHECK(reports::check_of(hard_cycle(), converted, true) == report::Check::DeadlockPotential);
  CHECK(reports::check_of(reports::no_progress_verdict(), converted, true) == report::Check::NoProgress);

  const report::Report report = reports::verdict_report(hard_cycle(), 0.26, plain, settings());
  CHECK(report.check == report::Check::DeadlockHard);
  CHECK(report.rule == "a cycle; seen in two looks 0.3 s apart with no progress in between");
  CHECK(report.threshold_seconds == 20);
  CHECK(std::string(report.threshold_key) == "DEADLOCK-TIMEOUT");
  CHECK(report.core.core == std::vector<int>{0, 1});
  CHECK(report.arcs.size() == 2);
  CHECK(report.ranks == plain);
}

TEST_CASE("a NO_PROGRESS warning is measured against DEADLOCK-WARNING", "[reports]") {
  const report::Report report =
      reports::verdict_report(reports::no_progress_verdict(), 0, {blocked_recv(0, 1)}, settings());
  CHECK(report.check == report::Check::NoProgress);
  CHECK(report.rule.starts_with("the ranks call MPI without completing anything (polling)"));
  CHECK(report.threshold_seconds == 300);
  CHECK(std::string(report.threshold_key) == "DEADLOCK-WARNING");
}

TEST_CASE("a dump names its signal, an exit report its rule", "[reports]") {
  config::Settings with_signal = settings();
  with_signal.dump_signal = 10;
  const report::Report dump = reports::dump_report({blocked_recv(0, 1), blocked_recv(1, 0)}, with_signal);
  CHECK(dump.check == report::Check::Dump);
  CHECK(dump.signal_number == 10);
  CHECK(dump.rule.starts_with("DUMP-SIGNAL SIGUSR1 reached a rank"));
  CHECK(dump.arcs.size() == 2);

  const report::Report exit = reports::exit_report({blocked_recv(0, 1)});
  CHECK(exit.check == report::Check::ExitBeforeFinalize);
  CHECK(std::string(exit.threshold_key).empty());
  CHECK(exit.rule == "a rank called exit() or returned from main after MPI_Init without calling MPI_Finalize");
}
