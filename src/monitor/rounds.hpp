// The monitor's rounds, free of MPI so that they can be unit-tested:
// what one rank observes of itself each tick, the summary every rank gets
// back from the tick's reduction, and what all ranks then do, in lockstep.
#pragma once

#include <chrono>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "records/thread_state.hpp"

namespace mpisentry::monitor {

using Clock = std::chrono::steady_clock;

// One rank's state at a tick. Times are measured by the monitor, so the
// wrappers never read the clock.
struct LocalStatus {
  // Every thread that has called MPI is inside a blocking call (or
  // MPI_Finalize), the one that entered last this long.
  double blocked_seconds = 0;
  bool blocked = false;        // every thread that has called MPI is in a blocking call
  double stalled_seconds = 0;  // in MPI, or calling it, without completing anything this long
  bool polling = false;        // stalled, but calling MPI_Test-like functions rather than blocked
  bool finalizing = false;
  std::uint64_t call_number = 0;  // which calls its threads are blocked in (a digest of their numbers)
  // Blocked with its other tasks held in waits only the process can end, or
  // with none (OutsideMpi::Held), seen so with this digest.
  bool held_outside = false;
  std::uint64_t outside_digest = 0;
  // Stalled with tasks outside MPI asleep, not provably held (OutsideMpi::Idle).
  bool idle_outside = false;
  // Set by the monitor, not observed: the rank got DUMP-SIGNAL since the last
  // round; the rank is exiting without MPI_Finalize.
  bool dump_requested = false;
  bool exiting = false;
};

// What the rank's other tasks do (its threads outside MPI, those that never
// called it, processes that share its memory), when every thread that has
// called MPI is in a blocking call or outside MPI (in_process::look reads it).
struct OutsideMpi {
  enum class Kind {
    None,  // not read, or a task outside MPI may act: the rank is not blocked
    Held,  // each sleeps in a wait only its own process can end, or there is none: the rank is blocked
    Idle,  // each sleeps, not all provably so: the rank stalls (a warning, never a verdict)
  };
  Kind kind = Kind::None;
  std::uint64_t digest = 0;  // changes when any of them ran or changed waits
  std::size_t tasks = 0;     // how many there are
};

// Every thread that has called MPI (`threads`, none untracked) is in a
// blocking call or outside MPI, at least one in a blocking call: only then
// may the rank be blocked, and only then are its other tasks read
// (OutsideMpi), which must all be held for it to be.
bool may_be_blocked(const std::vector<ThreadState::Sample>& threads, bool untracked);

// Turns the wrappers' counters into times.
class Observer {
 public:
  // A rank that makes no MPI call for this long is computing, not polling.
  static constexpr Clock::duration kComputingAfter = std::chrono::seconds(1);

  // `threads`: one sample of every live thread that has called MPI.
  // `untracked`: some thread's calls cannot be seen, so the rank is never blocked.
  // `outside`: what the rank's other tasks do, read whenever may_be_blocked
  // holds; the rank is blocked only when they are held.
  LocalStatus observe(const std::vector<ThreadState::Sample>& threads, Clock::time_point now,
                      bool untracked = false, const OutsideMpi& outside = {});
  // How long a thread has been in its current blocking call, as of the last
  // observe(); 0 when it is not in one.
  double blocked_seconds(int thread_id) const;

 private:
  struct Timed {
    std::uint64_t call = 0;  // the blocking call being timed, by its number
    Clock::time_point since{};
    double seconds = 0;
  };
  std::unordered_map<int, Timed> timed_;  // by thread id
  std::uint64_t held_digest_ = 0;         // the threads outside MPI held since held_since_
  Clock::time_point held_since_{};
  bool held_ = false;
  Clock::time_point idle_at_{};  // threads outside MPI last seen asleep, not provably held
  bool idle_seen_ = false;
  std::uint64_t progress_seen_ = 0;
  Clock::time_point progress_at_{};
  std::uint64_t calls_seen_ = 0;
  Clock::time_point last_call_at_{};
  bool started_ = false;
};

// The tick's reduction; each field combines with the MIN, SUM or MAX its
// comment names (see combine).
struct Summary {
  std::int64_t ranks = 0;                // SUM
  std::int64_t min_blocked_ms = 0;       // MIN: all ranks blocked at least this long
  std::int64_t long_blocked_ranks = 0;   // SUM: ranks blocked for DEADLOCK-TIMEOUT or more
  std::int64_t long_blocked_digest = 0;  // SUM: changes when one of those ranks changes calls
  std::int64_t stalled_ms = 0;           // SUM
  std::int64_t polling_ranks = 0;        // SUM
  std::int64_t finalizing_ranks = 0;     // SUM
  std::int64_t max_short_blocked_ms = 0; // MAX over ranks blocked for less than DEADLOCK-TIMEOUT
  std::int64_t step = 0;                 // MAX: what rank 0 asks of the next round (Step)
  std::int64_t warning_blocked_ranks = 0;   // SUM: ranks blocked for DEADLOCK-WARNING or more
  // SUM: changes when one of those ranks changes calls, or passes another
  // multiple of DEADLOCK-WARNING in the same call.
  std::int64_t warning_blocked_digest = 0;
  std::int64_t dump_requested = 0;  // MAX: some rank got DUMP-SIGNAL
  std::int64_t exiting_ranks = 0;   // SUM: ranks exiting without MPI_Finalize
  std::int64_t max_below_warning_ms = 0;  // MAX over ranks blocked for less than DEADLOCK-WARNING
  static constexpr int kFields = 14;
};

// What rank 0, the judge, asks every rank to do in the next round.
enum class Step : std::int64_t {
  None = 0,
  SecondLook = 1,  // gather the states again: a verdict rests on two looks with no progress between
  Report = 2,      // gather the stacks and write the report
};

struct Thresholds {
  std::chrono::microseconds deadlock_timeout;
  std::chrono::microseconds deadlock_warning;
  bool check_deadlock = true;     // HARD or POTENTIAL on
  bool check_no_progress = true;
  bool check_outside_mpi = true;
};

Summary summarize(const LocalStatus& status, int world_rank, const Thresholds& thresholds, Step step = Step::None);
void combine(const Summary& in, Summary& inout);

enum class Action {
  None,
  Stop,            // every rank is in MPI_Finalize: leave after this round
  CheckDeadlock,   // ranks blocked too long changed: gather snapshots, rank 0 judges
  SecondLook,      // rank 0 has a verdict in view: gather snapshots again
  Report,          // rank 0 confirmed a verdict: gather stacks, rank 0 reports
  WarnNoProgress,  // GLOBAL:DEADLOCK:NO_PROGRESS: report, the program goes on
  CheckOutsideMpi, // ranks blocked past DEADLOCK-WARNING changed: gather with stacks, rank 0 may warn
  Dump,            // some rank got DUMP-SIGNAL: gather with stacks, rank 0 writes the dump
  ReportExit,      // a rank exits without MPI_Finalize: gather with stacks, rank 0 reports, checking ends
};

// The longest time between rounds while no verdict can be due.
inline constexpr std::chrono::microseconds kLongestRoundGap = std::chrono::seconds(1);

// Identical on every rank: same summaries in, same actions out.
class Decider {
 public:
  explicit Decider(const Thresholds& thresholds) : thresholds_(thresholds) {}
  Action decide(const Summary& summary);
  // Ticks until the next round: one when a verdict may be due, up to a
  // second's worth while none can be, so that an idle job costs almost nothing.
  int ticks_until_next_round(const Summary& summary, std::chrono::microseconds tick) const;
  // Some rank is half way to DEADLOCK-TIMEOUT, or the ranks to DEADLOCK-WARNING.
  bool report_may_come(const Summary& summary) const;

 private:
  Action decide_action(const Summary& summary);
  Thresholds thresholds_;
  std::int64_t judged_ranks_ = 0;   // long_blocked_ranks at the last CheckDeadlock
  std::int64_t judged_digest_ = 0;
  // The same long-blocked calls are judged again after this many rounds,
  // twice as many each time up to kLongestRejudgeGap: a look can end
  // without a verdict for want of what it could not see then (a thread
  // that answered after kAnswerWait under load, a third look that saw a
  // rank change), so a verdict may come late, never not at all.
  static constexpr int kFirstRejudgeGap = 2;
  static constexpr int kLongestRejudgeGap = 32;
  int rejudge_gap_ = kFirstRejudgeGap;
  int rounds_since_judged_ = 0;
  bool warned_ = false;  // one NO_PROGRESS warning per stall
  bool judged_warning_ = false;  // every rank blocked past DEADLOCK-WARNING was judged once
  std::int64_t outside_mpi_digest_ = 0;  // warning_blocked_digest at the last CheckOutsideMpi
  Action last_action_ = Action::None;
};

}  // namespace mpisentry::monitor
