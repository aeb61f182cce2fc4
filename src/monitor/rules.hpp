// The monitor's decisions, free of MPI so that they can be unit-tested:
// what one rank observes of itself each tick, the summary every rank gets
// back from the tick's reduction, and what all ranks then do, in lockstep.
#pragma once

#include <chrono>
#include <cstdint>

#include "wrappers/call_record.hpp"

namespace mpisentry::monitor {

using Clock = std::chrono::steady_clock;

// One rank's state at a tick. Times are measured by the monitor, so the
// wrappers never read the clock.
struct LocalStatus {
  double blocked_seconds = 0;  // inside one blocking call (or MPI_Finalize) this long
  double stalled_seconds = 0;  // in MPI, or calling it, without completing anything this long
  bool polling = false;        // stalled, but calling MPI_Test-like functions rather than blocked
  bool finalizing = false;
  std::uint64_t call_number = 0;  // which call it is blocked in (calls entered so far)
};

// Turns the wrappers' counters into times.
class Observer {
 public:
  // A rank that makes no MPI call for this long is computing, not polling.
  static constexpr Clock::duration kComputingAfter = std::chrono::seconds(1);

  LocalStatus observe(const Activity::Sample& sample, Clock::time_point now);

 private:
  std::uint64_t timed_call_ = 0;  // the blocking call being timed, by its number
  Clock::time_point blocked_since_{};
  std::uint64_t progress_seen_ = 0;
  Clock::time_point progress_at_{};
  std::uint64_t calls_seen_ = 0;
  Clock::time_point last_call_at_{};
  bool started_ = false;
};

// The tick's reduction; every field combines with MIN or SUM (see combine).
struct Summary {
  std::int64_t ranks = 0;                // SUM
  std::int64_t min_blocked_ms = 0;       // MIN: all ranks blocked at least this long
  std::int64_t long_blocked_ranks = 0;   // SUM: ranks blocked for DEADLOCK-TIMEOUT or more
  std::int64_t long_blocked_digest = 0;  // SUM: changes when one of those ranks changes calls
  std::int64_t stalled_ms = 0;           // SUM
  std::int64_t polling_ranks = 0;        // SUM
  std::int64_t finalizing_ranks = 0;     // SUM
  std::int64_t max_short_blocked_ms = 0; // MAX over ranks blocked for less than DEADLOCK-TIMEOUT
  static constexpr int kFields = 8;
};

Summary summarize(const LocalStatus& status, int world_rank, std::chrono::microseconds deadlock_timeout);
void combine(const Summary& in, Summary& inout);

enum class Action {
  None,
  Stop,            // every rank is in MPI_Finalize: leave after this round
  CheckDeadlock,   // ranks blocked too long changed: gather snapshots, rank 0 judges
  WarnNoProgress,  // GLOBAL:DEADLOCK:NO_PROGRESS: report, the program goes on
};

// The longest time between rounds while no verdict can be due.
inline constexpr std::chrono::microseconds kLongestRoundGap = std::chrono::seconds(1);

struct Thresholds {
  std::chrono::microseconds deadlock_timeout;
  std::chrono::microseconds deadlock_warning;
  bool check_deadlock = true;     // HARD or POTENTIAL on
  bool check_no_progress = true;
};

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
  // Every rank blocked for DEADLOCK-TIMEOUT: HARD even if the graph names no core.
  bool all_blocked(const Summary& summary) const;

 private:
  Thresholds thresholds_;
  std::int64_t judged_ranks_ = 0;   // long_blocked_ranks at the last CheckDeadlock
  std::int64_t judged_digest_ = 0;
  bool warned_ = false;  // one NO_PROGRESS warning per stall
};

}  // namespace mpisentry::monitor
