#include "monitor/rounds.hpp"

#include <algorithm>
#include <limits>

namespace mpisentry::monitor {
namespace {

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::int64_t milliseconds(double s) { return static_cast<std::int64_t>(s * 1000.0); }

// Sums wrap instead of overflowing (the digest is a hash).
std::int64_t wrapping_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

}  // namespace

bool may_be_blocked(const std::vector<ThreadState::Sample>& threads, bool untracked) {
  bool blocking = false;
  for (const ThreadState::Sample& thread : threads) {
    if (thread.in_call && function_info(thread.call.function).kind != CallKind::Blocking) return false;
    blocking = blocking || thread.in_call;
  }
  return blocking && !untracked;
}

LocalStatus Observer::observe(const std::vector<ThreadState::Sample>& threads, Clock::time_point now,
                              bool untracked, const OutsideMpi& outside) {
  std::uint64_t progress = 0, calls = 0;
  bool polling_now = false, every_thread_blocked = !threads.empty() && !untracked;
  LocalStatus status;
  status.blocked_seconds = std::numeric_limits<double>::infinity();
  std::unordered_map<int, Timed> timed;
  for (const ThreadState::Sample& thread : threads) {
    progress += thread.progress;
    calls += thread.entered + thread.starts;
    status.finalizing = status.finalizing || (thread.in_call && thread.call.shape == CallShape::Finalize);
    const bool blocking = thread.in_call && function_info(thread.call.function).kind == CallKind::Blocking;
    if (!blocking) {
      every_thread_blocked = every_thread_blocked && !thread.in_call;  // outside MPI: decided below
      polling_now = polling_now || thread.in_call;
      continue;
    }
    Timed entry{thread.entered, now, 0};
    if (const auto found = timed_.find(thread.id); found != timed_.end() && found->second.call == thread.entered)
      entry.since = found->second.since;
    entry.seconds = seconds(now - entry.since);
    timed.emplace(thread.id, entry);
    status.blocked_seconds = std::min(status.blocked_seconds, entry.seconds);
    status.call_number = status.call_number * 0x9E3779B97F4A7C15ull + thread.entered + static_cast<std::uint64_t>(thread.id);
  }
  timed_ = std::move(timed);
  // The rank's other tasks: it is blocked only when each sleeps in a wait
  // only its own process can end, timed from when they were first seen so.
  const bool shape = may_be_blocked(threads, untracked);
  const bool held = shape && outside.kind == OutsideMpi::Kind::Held;
  const bool idle = shape && outside.kind == OutsideMpi::Kind::Idle;
  if (held) {
    if (!held_ || outside.digest != held_digest_) held_since_ = now;
    held_digest_ = outside.digest;
    status.blocked_seconds = std::min(status.blocked_seconds, seconds(now - held_since_));
    status.call_number = status.call_number * 0x9E3779B97F4A7C15ull + outside.digest;
  }
  held_ = held;
  status.held_outside = held;
  status.outside_digest = held ? outside.digest : 0;
  status.idle_outside = idle;
  if (!held) every_thread_blocked = false;
  status.blocked = every_thread_blocked;
  if (!every_thread_blocked) {
    status.blocked_seconds = 0;
    status.call_number = 0;
  }

  if (!started_) {
    started_ = true;
    progress_seen_ = progress;
    calls_seen_ = calls;
    progress_at_ = last_call_at_ = now;
  }
  if (progress != progress_seen_) {
    progress_seen_ = progress;
    progress_at_ = now;
  }
  if (calls != calls_seen_) {
    calls_seen_ = calls;
    last_call_at_ = now;
  }
  // A rank that stopped calling MPI computes: its stall starts again when it
  // polls again, so long computations never count as lack of progress.
  // A thread blocked in MPI does not make its rank poll: only threads in
  // Test-like calls, or calls made lately, do.
  // Threads that sleep outside MPI while the others are blocked in it make a
  // stalled rank, as one that polls does.
  // A thread that sleeps in a loop is sometimes seen awake: the rank
  // computes only once none has been seen asleep for kComputingAfter.
  if (idle) idle_at_ = now;
  if (!shape) idle_seen_ = false;
  idle_seen_ = idle_seen_ || idle;
  const bool calling = polling_now || (idle_seen_ && now - idle_at_ < kComputingAfter) ||
                       now - last_call_at_ < kComputingAfter;
  if (!calling) progress_at_ = now;
  status.stalled_seconds = seconds(now - progress_at_);
  status.polling = calling && !every_thread_blocked && status.stalled_seconds > 0;
  return status;
}

double Observer::blocked_seconds(int thread_id) const {
  const auto found = timed_.find(thread_id);
  return found == timed_.end() ? 0 : found->second.seconds;
}

Summary summarize(const LocalStatus& status, int world_rank, const Thresholds& thresholds, Step step) {
  Summary summary;
  summary.step = static_cast<std::int64_t>(step);
  summary.ranks = 1;
  summary.min_blocked_ms = milliseconds(status.blocked_seconds);
  const std::uint64_t call_digest = (status.call_number * 0x9E3779B97F4A7C15ull) ^ static_cast<std::uint64_t>(world_rank);
  const double blocked_us = status.blocked_seconds * 1e6;
  if (blocked_us >= static_cast<double>(thresholds.deadlock_timeout.count())) {
    summary.long_blocked_ranks = 1;
    summary.long_blocked_digest = static_cast<std::int64_t>(call_digest);
  }
  const double warning_us = static_cast<double>(thresholds.deadlock_warning.count());
  if (warning_us > 0 && blocked_us >= warning_us) {
    const auto periods = static_cast<std::uint64_t>(blocked_us / warning_us);
    summary.warning_blocked_ranks = 1;
    summary.warning_blocked_digest = static_cast<std::int64_t>(call_digest * 31 + periods);
  } else {
    summary.max_below_warning_ms = summary.min_blocked_ms;
  }
  summary.dump_requested = status.dump_requested ? 1 : 0;
  summary.exiting_ranks = status.exiting ? 1 : 0;
  summary.stalled_ms = milliseconds(status.stalled_seconds);
  summary.polling_ranks = status.polling ? 1 : 0;
  summary.finalizing_ranks = status.finalizing ? 1 : 0;
  if (summary.long_blocked_ranks == 0) summary.max_short_blocked_ms = summary.min_blocked_ms;
  return summary;
}

void combine(const Summary& in, Summary& inout) {
  inout.ranks += in.ranks;
  inout.min_blocked_ms = std::min(inout.min_blocked_ms, in.min_blocked_ms);
  inout.long_blocked_ranks += in.long_blocked_ranks;
  inout.long_blocked_digest = wrapping_add(inout.long_blocked_digest, in.long_blocked_digest);
  inout.stalled_ms += in.stalled_ms;
  inout.polling_ranks += in.polling_ranks;
  inout.finalizing_ranks += in.finalizing_ranks;
  inout.max_short_blocked_ms = std::max(inout.max_short_blocked_ms, in.max_short_blocked_ms);
  inout.step = std::max(inout.step, in.step);
  inout.warning_blocked_ranks += in.warning_blocked_ranks;
  inout.warning_blocked_digest = wrapping_add(inout.warning_blocked_digest, in.warning_blocked_digest);
  inout.dump_requested = std::max(inout.dump_requested, in.dump_requested);
  inout.exiting_ranks += in.exiting_ranks;
  inout.max_below_warning_ms = std::max(inout.max_below_warning_ms, in.max_below_warning_ms);
}

Action Decider::decide(const Summary& summary) {
  last_action_ = decide_action(summary);
  return last_action_;
}

Action Decider::decide_action(const Summary& summary) {
  if (summary.ranks > 0 && summary.finalizing_ranks == summary.ranks) return Action::Stop;
  if (summary.exiting_ranks > 0) return Action::ReportExit;
  if (summary.step == static_cast<std::int64_t>(Step::SecondLook)) return Action::SecondLook;
  if (summary.step == static_cast<std::int64_t>(Step::Report)) return Action::Report;
  if (summary.dump_requested > 0) return Action::Dump;

  // Judge once per change of the set of long-blocked calls, and again the
  // same set after doubling gaps: a partial wait that is not a deadlock
  // (load imbalance) is not gathered again every tick, and a verdict a
  // look missed comes late rather than never.
  ++rounds_since_judged_;
  const bool long_blocked = thresholds_.check_deadlock && summary.long_blocked_ranks > 0;
  if (long_blocked &&
      (summary.long_blocked_ranks != judged_ranks_ || summary.long_blocked_digest != judged_digest_)) {
    judged_ranks_ = summary.long_blocked_ranks;
    judged_digest_ = summary.long_blocked_digest;
    rejudge_gap_ = kFirstRejudgeGap;
    rounds_since_judged_ = 0;
    return Action::CheckDeadlock;
  }
  const bool warning_due = summary.min_blocked_ms * 1000 >= thresholds_.deadlock_warning.count();
  // Ranks blocked past DEADLOCK-WARNING are looked at whenever their calls
  // change and once every DEADLOCK-WARNING: a rank outside MPI may hold them
  // (none can when every rank is blocked).
  if (summary.warning_blocked_ranks == 0) {
    outside_mpi_digest_ = 0;
  } else if (thresholds_.check_outside_mpi && !warning_due && summary.warning_blocked_digest != outside_mpi_digest_) {
    outside_mpi_digest_ = summary.warning_blocked_digest;
    return Action::CheckOutsideMpi;
  }
  // Every rank blocked past DEADLOCK-WARNING in calls that may still complete
  // together is judged once more, for the warning that the run is slow.
  if (!warning_due) {
    judged_warning_ = false;
  } else if (thresholds_.check_deadlock && !judged_warning_) {
    judged_warning_ = true;
    return Action::CheckDeadlock;
  }

  const double average_stall_us =
      summary.ranks > 0 ? 1000.0 * static_cast<double>(summary.stalled_ms) / static_cast<double>(summary.ranks) : 0;
  if (average_stall_us < static_cast<double>(thresholds_.deadlock_warning.count())) {
    warned_ = false;  // progress resumed: a later stall is warned about again
  } else if (thresholds_.check_no_progress && summary.polling_ranks > 0 && !warned_) {
    warned_ = true;
    return Action::WarnNoProgress;
  }
  // When nothing else is due: the same long-blocked calls again.
  if (long_blocked && rounds_since_judged_ >= rejudge_gap_) {
    rejudge_gap_ = std::min(2 * rejudge_gap_, kLongestRejudgeGap);
    rounds_since_judged_ = 0;
    return Action::CheckDeadlock;
  }
  return Action::None;
}

int Decider::ticks_until_next_round(const Summary& summary, std::chrono::microseconds tick) const {
  // Rank 0 may ask for a second look or a report after a judgement.
  if (summary.finalizing_ranks > 0 || last_action_ == Action::CheckDeadlock || last_action_ == Action::SecondLook)
    return 1;
  // No rank can pass DEADLOCK-TIMEOUT sooner than the longest-blocked rank
  // below it, nor the average stall DEADLOCK-WARNING faster than a second a
  // second (and only while a rank polls: blocked ranks alone are not warned of).
  double due_us = static_cast<double>(kLongestRoundGap.count());
  if (thresholds_.check_deadlock)
    due_us = std::min(due_us, static_cast<double>(thresholds_.deadlock_timeout.count()) -
                                  1000.0 * static_cast<double>(summary.max_short_blocked_ms));
  // Nor DEADLOCK-WARNING sooner than the longest-blocked rank below it.
  if (thresholds_.check_outside_mpi)
    due_us = std::min(due_us, static_cast<double>(thresholds_.deadlock_warning.count()) -
                                  1000.0 * static_cast<double>(summary.max_below_warning_ms));
  if (thresholds_.check_no_progress && !warned_ && summary.polling_ranks > 0)
    due_us = std::min(due_us, static_cast<double>(thresholds_.deadlock_warning.count()) -
                                  1000.0 * static_cast<double>(summary.stalled_ms) /
                                      static_cast<double>(summary.ranks));
  return std::max(1, static_cast<int>(due_us / static_cast<double>(tick.count())));
}

bool Decider::report_may_come(const Summary& summary) const {
  const double half_timeout_ms = static_cast<double>(thresholds_.deadlock_timeout.count()) / 2000.0;
  const double half_warning_ms = static_cast<double>(thresholds_.deadlock_warning.count()) / 2000.0;
  const bool deadlock =
      thresholds_.check_deadlock &&
      (summary.long_blocked_ranks > 0 || static_cast<double>(summary.max_short_blocked_ms) >= half_timeout_ms);
  const bool stall = thresholds_.check_no_progress && summary.polling_ranks > 0 && summary.ranks > 0 &&
                     static_cast<double>(summary.stalled_ms) / static_cast<double>(summary.ranks) >= half_warning_ms;
  return deadlock || stall;
}

}  // namespace mpisentry::monitor
