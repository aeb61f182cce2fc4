// The monitor's decisions: how counters become times, and what all ranks do
// with a tick's summary.
#include <catch2/catch.hpp>

#include <vector>

#include "monitor/rounds.hpp"

using namespace mpisentry;
using namespace mpisentry::monitor;
using namespace std::chrono_literals;

namespace {

ThreadState::Sample in_call(FunctionId function, std::uint64_t entered, std::uint64_t progress,
                            CallShape shape = CallShape::Receive, int thread = 0) {
  ThreadState::Sample sample;
  sample.call.function = function;
  sample.call.shape = shape;
  sample.in_call = true;
  sample.entered = entered;
  sample.progress = progress;
  sample.id = thread;
  return sample;
}

ThreadState::Sample outside(std::uint64_t entered, std::uint64_t progress, FunctionId last = FunctionId::Test,
                            int thread = 0) {
  ThreadState::Sample sample = in_call(last, entered, progress, CallShape::Receive, thread);
  sample.in_call = false;
  return sample;
}

const Clock::time_point t0{};

// What in_process::look finds when the rank has no task outside MPI: its
// threads in MPI alone decide.
const OutsideMpi no_other_task{OutsideMpi::Kind::Held, 0, 0};

Thresholds thresholds() { return Thresholds{3s, 10s, true, true}; }

Summary reduce(const std::vector<LocalStatus>& ranks, const std::vector<Step>& steps = {}) {
  const auto step_of = [&](std::size_t rank) { return rank < steps.size() ? steps[rank] : Step::None; };
  Summary total = summarize(ranks.front(), 0, thresholds(), step_of(0));
  for (std::size_t rank = 1; rank < ranks.size(); ++rank)
    combine(summarize(ranks[rank], static_cast<int>(rank), thresholds(), step_of(rank)), total);
  return total;
}

LocalStatus blocked(double seconds, std::uint64_t call = 1) {
  LocalStatus status;
  status.blocked_seconds = seconds;
  status.stalled_seconds = seconds;
  status.call_number = call;
  return status;
}

LocalStatus polling(double seconds) {
  LocalStatus status;
  status.stalled_seconds = seconds;
  status.polling = true;
  return status;
}

LocalStatus finalizing() {
  LocalStatus status = blocked(0.5);
  status.finalizing = true;
  return status;
}

}  // namespace

TEST_CASE("a rank blocked in one call accumulates blocked time from the first tick that saw it", "[rules]") {
  Observer observer;
  CHECK(observer.observe({in_call(FunctionId::Recv, 5, 2)}, t0, false, no_other_task).blocked_seconds == 0);
  const LocalStatus later = observer.observe({in_call(FunctionId::Recv, 5, 2)}, t0 + 4s, false, no_other_task);
  CHECK(later.blocked_seconds == Approx(4.0));
  CHECK(later.call_number != 0);
  CHECK_FALSE(later.polling);
  // The next blocking call is timed from its own start, under another number.
  const LocalStatus next = observer.observe({in_call(FunctionId::Recv, 6, 3)}, t0 + 5s, false, no_other_task);
  CHECK(next.blocked_seconds == 0);
  CHECK(next.call_number != later.call_number);
}

TEST_CASE("a rank whose blocking calls return is never blocked for long", "[rules]") {
  Observer observer;
  for (int tick = 0; tick < 50; ++tick) {
    const auto calls = static_cast<std::uint64_t>(tick * 10);
    const LocalStatus status = observer.observe({in_call(FunctionId::Recv, calls, calls)}, t0 + tick * 100ms, false, no_other_task);
    CHECK(status.blocked_seconds == 0);
    CHECK(status.stalled_seconds < 0.2);
  }
}

TEST_CASE("a rank that computes outside MPI is neither blocked nor stalled", "[rules]") {
  Observer observer;
  observer.observe({outside(7, 7, FunctionId::Recv)}, t0);
  const LocalStatus status = observer.observe({outside(7, 7, FunctionId::Recv)}, t0 + 10min);
  CHECK(status.blocked_seconds == 0);
  CHECK(status.stalled_seconds == 0);
  CHECK_FALSE(status.polling);
}

TEST_CASE("a polling loop that completes nothing stalls, its stall starts when polling starts", "[rules]") {
  Observer observer;
  observer.observe({outside(1, 1)}, t0);
  observer.observe({outside(1, 1)}, t0 + 30s);  // computing: no stall
  LocalStatus status;
  for (int tick = 1; tick <= 20; ++tick)
    status = observer.observe({outside(1 + static_cast<std::uint64_t>(tick) * 100, 1)}, t0 + 30s + tick * 100ms);
  CHECK(status.polling);
  CHECK(status.stalled_seconds == Approx(2.0));
  CHECK(status.blocked_seconds == 0);

  const LocalStatus progressed = observer.observe({outside(5000, 2)}, t0 + 33s);
  CHECK(progressed.stalled_seconds == 0);
}

TEST_CASE("a rank in MPI_Finalize counts as blocked and finalizing", "[rules]") {
  Observer observer;
  observer.observe({in_call(FunctionId::Finalize, 9, 9, CallShape::Finalize)}, t0, false, no_other_task);
  const LocalStatus status = observer.observe({in_call(FunctionId::Finalize, 9, 9, CallShape::Finalize)}, t0 + 2s, false, no_other_task);
  CHECK(status.finalizing);
  CHECK(status.blocked_seconds == Approx(2.0));
}

TEST_CASE("a rank with two threads is blocked only while both are", "[rules]") {
  Observer observer;
  const auto recv = in_call(FunctionId::Recv, 3, 1, CallShape::Receive, 0);
  observer.observe({recv, outside(4, 4, FunctionId::Test, 1)}, t0);
  LocalStatus status = observer.observe({recv, outside(4, 4, FunctionId::Test, 1)}, t0 + 4s);
  CHECK(status.blocked_seconds == 0);
  CHECK(status.call_number == 0);
  CHECK(observer.blocked_seconds(0) == Approx(4.0));
  CHECK(observer.blocked_seconds(1) == 0);

  // Thread 1 enters a barrier at 4 s: the rank is blocked since then, the
  // time of the thread that entered last.
  const auto barrier = in_call(FunctionId::Barrier, 5, 4, CallShape::Collective, 1);
  observer.observe({recv, barrier}, t0 + 4s, false, no_other_task);
  status = observer.observe({recv, barrier}, t0 + 7s, false, no_other_task);
  CHECK(status.blocked_seconds == Approx(3.0));
  CHECK(status.call_number != 0);
  CHECK(observer.observe({barrier, recv}, t0 + 7s, false, no_other_task).blocked_seconds == Approx(3.0));  // whatever the order
  CHECK(observer.blocked_seconds(0) == Approx(7.0));
  CHECK(observer.blocked_seconds(1) == Approx(3.0));
  CHECK(observer.blocked_seconds(2) == 0);  // no such thread

  SECTION("a thread in a polling call keeps the rank from being blocked") {
    const auto test = in_call(FunctionId::Test, 6, 4, CallShape::Requests, 1);
    observer.observe({recv, test}, t0 + 8s);
    const LocalStatus polled = observer.observe({recv, test}, t0 + 9s);
    CHECK(polled.blocked_seconds == 0);
    CHECK(observer.blocked_seconds(1) == 0);
  }
  SECTION("a thread that leaves its call stops being timed, and is timed afresh in its next") {
    observer.observe({recv, outside(5, 5, FunctionId::Barrier, 1)}, t0 + 8s);
    CHECK(observer.blocked_seconds(1) == 0);
    const auto next_barrier = in_call(FunctionId::Barrier, 6, 5, CallShape::Collective, 1);
    observer.observe({recv, next_barrier}, t0 + 9s, false, no_other_task);
    CHECK(observer.observe({recv, next_barrier}, t0 + 10s, false, no_other_task).blocked_seconds == Approx(1.0));
  }
}

TEST_CASE("a rank with a thread blocked and another computing outside MPI is not polling", "[rules]") {
  // A progress thread waits in MPI_Recv for a shutdown message while the
  // main thread computes without calling MPI.
  Observer observer;
  const auto recv = in_call(FunctionId::Recv, 3, 1, CallShape::Receive, 1);
  observer.observe({outside(9, 9, FunctionId::Bcast, 0), recv}, t0);
  const LocalStatus status = observer.observe({outside(9, 9, FunctionId::Bcast, 0), recv}, t0 + 10min);
  CHECK(status.blocked_seconds == 0);
  CHECK_FALSE(status.polling);
}

TEST_CASE("a rank whose threads in MPI are all blocked is not while another of its tasks may act", "[rules]") {
  // A thread that never called MPI computes (or could not be read), or sleeps
  // in a wait that might end by itself: in_process::look says None or Idle.
  Observer observer;
  const auto recv = in_call(FunctionId::Recv, 3, 1, CallShape::Receive, 0);
  observer.observe({recv}, t0, false, {OutsideMpi::Kind::None, 0, 1});
  LocalStatus status = observer.observe({recv}, t0 + 10s, false, {OutsideMpi::Kind::None, 0, 1});
  CHECK_FALSE(status.blocked);
  CHECK(status.blocked_seconds == 0);
  status = observer.observe({recv}, t0 + 11s, false, {OutsideMpi::Kind::Idle, 7, 1});
  CHECK_FALSE(status.blocked);
  CHECK(status.idle_outside);
  // Held (asleep where only the process can wake it): blocked from then on.
  observer.observe({recv}, t0 + 12s, false, {OutsideMpi::Kind::Held, 8, 1});
  status = observer.observe({recv}, t0 + 15s, false, {OutsideMpi::Kind::Held, 8, 1});
  CHECK(status.blocked);
  CHECK(status.blocked_seconds == Approx(3.0));
}

TEST_CASE("a rank with a thread the checker cannot see is never blocked", "[rules]") {
  Observer observer;
  observer.observe({in_call(FunctionId::Recv, 5, 2)}, t0, true);
  const LocalStatus status = observer.observe({in_call(FunctionId::Recv, 5, 2)}, t0 + 1h, true);
  CHECK(status.blocked_seconds == 0);
  CHECK_FALSE(status.finalizing);
}

TEST_CASE("a rank with no thread that called MPI is not blocked", "[rules]") {
  Observer observer;
  observer.observe({}, t0);
  CHECK(observer.observe({}, t0 + 1h).blocked_seconds == 0);
}

TEST_CASE("the summary combines minimum blocked time and sums", "[rules]") {
  const Summary summary = reduce({blocked(5), blocked(4), polling(2)});
  CHECK(summary.ranks == 3);
  CHECK(summary.min_blocked_ms == 0);
  CHECK(summary.long_blocked_ranks == 2);
  CHECK(summary.stalled_ms == 11000);
  CHECK(summary.polling_ranks == 1);
}

TEST_CASE("every rank blocked past the timeout is judged once, and judged again when a call changes", "[rules]") {
  Decider decider(thresholds());
  const Summary all = reduce({blocked(3.5), blocked(4)});
  CHECK(all.min_blocked_ms == 3500);
  CHECK(decider.decide(all) == Action::CheckDeadlock);
  CHECK(decider.decide(reduce({blocked(3.6), blocked(4.1)})) == Action::None);
  CHECK(decider.decide(reduce({blocked(3.6, 2), blocked(4.1)})) == Action::CheckDeadlock);
}

TEST_CASE("ranks waiting for a computing rank are judged, not every tick, and never all-blocked", "[rules]") {
  Decider decider(thresholds());
  const Summary waiting = reduce({LocalStatus{}, blocked(5), blocked(5)});
  CHECK(waiting.min_blocked_ms == 0);
  CHECK(decider.decide(waiting) == Action::CheckDeadlock);
  // Judged again after 2, 4, 8 ... rounds, then every 32: a look that missed
  // a verdict (a thread that answered too late under load) is retried.
  std::vector<int> gaps;
  int since = 0;
  for (int tick = 0; tick < 200; ++tick) {
    ++since;
    if (decider.decide(waiting) != Action::CheckDeadlock) continue;
    gaps.push_back(since);
    since = 0;
  }
  CHECK(gaps == std::vector<int>{2, 4, 8, 16, 32, 32, 32, 32, 32});
  // A change of the long-blocked calls is judged at once, and the gaps start again.
  CHECK(decider.decide(reduce({LocalStatus{}, blocked(5, 2), blocked(5)})) == Action::CheckDeadlock);
  CHECK(decider.decide(reduce({LocalStatus{}, blocked(5, 2), blocked(5)})) == Action::None);
  CHECK(decider.decide(reduce({LocalStatus{}, blocked(5, 2), blocked(5)})) == Action::CheckDeadlock);
}

TEST_CASE("ranks blocked for less than the timeout are not judged", "[rules]") {
  Decider decider(thresholds());
  CHECK(decider.decide(reduce({blocked(2.9), blocked(2.9)})) == Action::None);
}

TEST_CASE("the step rank 0 asks for combines with MAX and is what every rank does next", "[rules]") {
  const Summary none = reduce({blocked(5), blocked(5)});
  CHECK(none.step == static_cast<std::int64_t>(Step::None));
  const Summary second = reduce({blocked(5), blocked(5)}, {Step::SecondLook, Step::None});
  CHECK(second.step == static_cast<std::int64_t>(Step::SecondLook));
  const Summary report = reduce({blocked(5), blocked(5), blocked(5)}, {Step::None, Step::Report, Step::SecondLook});
  CHECK(report.step == static_cast<std::int64_t>(Step::Report));

  Decider decider(thresholds());
  CHECK(decider.decide(none) == Action::CheckDeadlock);
  CHECK(decider.decide(second) == Action::SecondLook);
  CHECK(decider.decide(report) == Action::Report);
  // Whatever the ranks' times: a step is not judged again.
  CHECK(decider.decide(reduce({LocalStatus{}, polling(20)}, {Step::SecondLook})) == Action::SecondLook);
  CHECK(decider.decide(reduce({LocalStatus{}, LocalStatus{}}, {Step::None, Step::Report})) == Action::Report);
  // Every rank finalizing ends the monitors even so.
  CHECK(decider.decide(reduce({finalizing(), finalizing()}, {Step::Report})) == Action::Stop);
}

TEST_CASE("a rank 0 that asked for a look is given a round at the next tick", "[rules]") {
  Decider decider(thresholds());
  constexpr auto tick = 100ms;
  const Summary calm = reduce({LocalStatus{}, LocalStatus{}});
  decider.decide(reduce({blocked(5), blocked(5)}));
  CHECK(decider.ticks_until_next_round(calm, tick) == 1);
  decider.decide(reduce({blocked(5), blocked(5)}, {Step::SecondLook}));
  CHECK(decider.ticks_until_next_round(calm, tick) == 1);
  decider.decide(calm);
  CHECK(decider.ticks_until_next_round(calm, tick) == 10);
}

TEST_CASE("every rank blocked past DEADLOCK-WARNING is judged once more, for the slow warning", "[rules]") {
  Decider decider(thresholds());
  CHECK(decider.decide(reduce({blocked(4), blocked(4)})) == Action::CheckDeadlock);
  CHECK(decider.decide(reduce({blocked(9), blocked(9.5)})) == Action::None);
  CHECK(decider.decide(reduce({blocked(10), blocked(10.5)})) == Action::CheckDeadlock);
  // Then only as the same long-blocked calls are, after doubling gaps.
  int judged = 0;
  for (int tick = 0; tick < 20; ++tick) judged += decider.decide(reduce({blocked(11), blocked(12)})) == Action::CheckDeadlock;
  CHECK(judged == 3);

  SECTION("and again after the ranks moved on and passed it anew") {
    CHECK(decider.decide(reduce({blocked(0.1, 2), blocked(0.1, 2)})) == Action::None);
    CHECK(decider.decide(reduce({blocked(4, 2), blocked(4, 2)})) == Action::CheckDeadlock);
    CHECK(decider.decide(reduce({blocked(10, 2), blocked(10, 2)})) == Action::CheckDeadlock);
  }
  SECTION("not while one rank is blocked for less") {
    Decider fresh(Thresholds{3s, 10s, true, true, /*check_outside_mpi=*/false});
    CHECK(fresh.decide(reduce({blocked(11), blocked(11), LocalStatus{}})) == Action::CheckDeadlock);
    CHECK(fresh.decide(reduce({blocked(20), blocked(20), blocked(9)})) == Action::CheckDeadlock);  // a third long-blocked rank
    CHECK(fresh.decide(reduce({blocked(21), blocked(21), blocked(9.9)})) == Action::None);
    CHECK(fresh.decide(reduce({blocked(21), blocked(21), blocked(10)})) == Action::CheckDeadlock);
  }
  SECTION("not with the deadlock checks off") {
    Decider off(Thresholds{3s, 10s, false, true});
    CHECK(off.decide(reduce({blocked(4), blocked(4)})) == Action::None);
    CHECK(off.decide(reduce({blocked(11), blocked(11)})) == Action::None);
  }
}

TEST_CASE("no-progress warns once per stall, only when a rank polls", "[rules]") {
  Decider decider(thresholds());
  CHECK(decider.decide(reduce({polling(9), polling(9)})) == Action::None);
  CHECK(decider.decide(reduce({polling(11), polling(11)})) == Action::WarnNoProgress);
  CHECK(decider.decide(reduce({polling(12), polling(12)})) == Action::None);
  CHECK(decider.decide(reduce({polling(1), polling(1)})) == Action::None);  // progress resumed
  CHECK(decider.decide(reduce({polling(11), polling(11)})) == Action::WarnNoProgress);
}

TEST_CASE("load imbalance without polling never warns of no progress", "[rules]") {
  Decider decider(thresholds());
  LocalStatus in_barrier = blocked(20);
  in_barrier.call_number = 3;
  for (int tick = 0; tick < 10; ++tick)
    CHECK(decider.decide(reduce({LocalStatus{}, in_barrier, in_barrier})) != Action::WarnNoProgress);
}

TEST_CASE("ranks blocked past DEADLOCK-WARNING are looked at for ranks outside MPI, again each period", "[rules]") {
  Decider decider(thresholds());
  const LocalStatus running;
  CHECK(decider.decide(reduce({running, blocked(4), blocked(4)})) == Action::CheckDeadlock);
  CHECK(decider.decide(reduce({running, blocked(9.9), blocked(9.9)})) == Action::None);  // imbalance below the threshold
  CHECK(decider.decide(reduce({running, blocked(10), blocked(10.1)})) == Action::CheckOutsideMpi);
  for (int tick = 0; tick < 10; ++tick)
    CHECK(decider.decide(reduce({running, blocked(11), blocked(12)})) != Action::CheckOutsideMpi);
  CHECK(decider.decide(reduce({running, blocked(20), blocked(19)})) == Action::CheckOutsideMpi);  // rank 1's 2nd period
  CHECK(decider.decide(reduce({running, blocked(20.1), blocked(20)})) == Action::CheckOutsideMpi);  // rank 2's
  CHECK(decider.decide(reduce({running, blocked(20.2), blocked(20.1)})) != Action::CheckOutsideMpi);
  // Another call: judged for a deadlock first, then looked at again.
  CHECK(decider.decide(reduce({running, blocked(10, 2), blocked(21)})) == Action::CheckDeadlock);
  CHECK(decider.decide(reduce({running, blocked(10, 2), blocked(21)})) == Action::CheckOutsideMpi);
  SECTION("the round comes when a rank reaches DEADLOCK-WARNING, not up to a second later") {
    Decider fresh(thresholds());
    const Summary nearly = reduce({running, blocked(9.5), blocked(9.7)});
    CHECK(fresh.decide(nearly) == Action::CheckDeadlock);  // judged once, then the rounds thin out
    CHECK(fresh.decide(nearly) == Action::None);
    CHECK(fresh.ticks_until_next_round(nearly, 100ms) == 3);
    Decider off(Thresholds{3s, 10s, true, true, /*check_outside_mpi=*/false});
    off.decide(nearly);
    off.decide(nearly);
    CHECK(off.ticks_until_next_round(nearly, 100ms) == 10);
  }
  SECTION("not with the check off") {
    Decider off(Thresholds{3s, 10s, true, true, /*check_outside_mpi=*/false});
    off.decide(reduce({running, blocked(4), blocked(4)}));
    for (int tick = 0; tick < 5; ++tick)
      CHECK(off.decide(reduce({running, blocked(11), blocked(11)})) != Action::CheckOutsideMpi);
  }
}

TEST_CASE("a dump request from any rank makes every rank dump, a rank's exit comes first", "[rules]") {
  Decider decider(thresholds());
  LocalStatus asked;
  asked.dump_requested = true;
  CHECK(decider.decide(reduce({LocalStatus{}, asked, LocalStatus{}})) == Action::Dump);
  CHECK(decider.decide(reduce({LocalStatus{}, LocalStatus{}})) == Action::None);
  // A report under way goes first (the dump is merged into it); an exit before all.
  CHECK(decider.decide(reduce({asked, LocalStatus{}}, {Step::Report})) == Action::Report);
  LocalStatus exiting;
  exiting.exiting = true;
  CHECK(decider.decide(reduce({asked, exiting}, {Step::Report})) == Action::ReportExit);
  CHECK(decider.decide(reduce({finalizing(), exiting})) == Action::ReportExit);
  CHECK(decider.decide(reduce({finalizing(), finalizing()})) == Action::Stop);
}

TEST_CASE("switched-off checks are never acted on", "[rules]") {
  Decider decider(Thresholds{3s, 10s, false, false});
  CHECK(decider.decide(reduce({blocked(5), blocked(5)})) == Action::None);
  CHECK(decider.decide(reduce({polling(20), polling(20)})) == Action::None);
}

TEST_CASE("the monitors stop after the round in which every rank is finalizing", "[rules]") {
  Decider decider(thresholds());
  CHECK(decider.decide(reduce({finalizing(), LocalStatus{}})) == Action::None);
  CHECK(decider.decide(reduce({finalizing(), finalizing()})) == Action::Stop);
}

TEST_CASE("rounds are a second apart while no verdict can be due, every tick when one may be", "[rules]") {
  const Decider decider(thresholds());
  constexpr auto tick = 100ms;
  CHECK(decider.ticks_until_next_round(reduce({LocalStatus{}, LocalStatus{}}), tick) == 10);
  // A rank blocked for 2.5 s of a 3 s timeout: the next round in 0.5 s.
  CHECK(decider.ticks_until_next_round(reduce({blocked(2.5), LocalStatus{}}), tick) == 5);
  CHECK(decider.ticks_until_next_round(reduce({blocked(2.95), LocalStatus{}}), tick) == 1);
  // Ranks past the timeout were judged already: only those below it matter.
  CHECK(decider.ticks_until_next_round(reduce({blocked(20), LocalStatus{}}), tick) == 10);
  // An average stall 0.3 s short of DEADLOCK-WARNING.
  CHECK(decider.ticks_until_next_round(reduce({polling(9.7), polling(9.7)}), tick) == 3);
  CHECK(decider.ticks_until_next_round(reduce({finalizing(), LocalStatus{}}), tick) == 1);
}

TEST_CASE("a report may come once a rank is half way to a threshold", "[rules]") {
  const Decider decider(thresholds());
  CHECK_FALSE(decider.report_may_come(reduce({blocked(1.4), LocalStatus{}})));
  CHECK(decider.report_may_come(reduce({blocked(1.5), LocalStatus{}})));
  CHECK(decider.report_may_come(reduce({blocked(9), LocalStatus{}})));
  CHECK_FALSE(decider.report_may_come(reduce({polling(4), polling(4)})));
  CHECK(decider.report_may_come(reduce({polling(5), polling(5)})));
}
