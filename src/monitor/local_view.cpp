#include "monitor/local_view.hpp"

#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>

#include <fmt/format.h>

#include "log/log.hpp"
#include "monitor/in_process.hpp"
#include "signals/signals.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::monitor {
namespace {

using namespace std::chrono_literals;

constexpr auto kStackTimeout = 1000ms;

}  // namespace

LocalView::Threads LocalView::sample_threads() {
  Threads threads;
  for_each_thread([&threads](const ThreadState& state) {
    ThreadState::Sample sample;
    // A writer holds the record for nanoseconds: retrying is enough, unless the thread exits.
    bool sampled = false;
    while (!(sampled = state.sample(sample)) && state.live()) std::this_thread::yield();
    if (!sampled) return;
    threads.states.push_back(&state);
    threads.samples.push_back(sample);
  });
  // By thread id: states are reused, so slot order says nothing.
  std::vector<std::size_t> order(threads.samples.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&threads](std::size_t a, std::size_t b) { return threads.samples[a].id < threads.samples[b].id; });
  Threads sorted;
  for (std::size_t i : order) {
    sorted.states.push_back(threads.states[i]);
    sorted.samples.push_back(threads.samples[i]);
  }
  return sorted;
}

OutsideMpi LocalView::look_outside(const std::vector<ThreadState::Sample>& samples, std::string* why) {
  if (!may_be_blocked(samples, untracked_threads())) return {};
  const in_process::Result seen = in_process::look(samples, static_cast<pid_t>(gettid()));
  if (why) *why = seen.why;
  switch (seen.holding) {
    case in_process::Holding::Held: return {OutsideMpi::Kind::Held, seen.digest, seen.tasks};
    case in_process::Holding::Idle: return {OutsideMpi::Kind::Idle, seen.digest, seen.tasks};
    case in_process::Holding::Runs: break;
  }
  return {};
}

LocalStatus LocalView::observe() {
  const Threads threads = sample_threads();
  check_thread_level(threads.samples);
  const LocalStatus status =
      observer_.observe(threads.samples, Clock::now(), untracked_threads(), look_outside(threads.samples));
  std::unordered_map<int, double> thread_seconds;
  for (const ThreadState::Sample& sample : threads.samples)
    thread_seconds[sample.id] = observer_.blocked_seconds(sample.id);
  std::lock_guard lock(status_mutex_);
  status_ = status;
  thread_seconds_ = std::move(thread_seconds);
  return status;
}

// Kept short: the round's message stays small.
std::string LocalView::state_line(const LocalStatus& status) const {
  constexpr std::size_t kLongest = 300;
  const Threads threads = sample_threads();
  std::string call;
  int in_mpi = 0;
  for (const ThreadState::Sample& sample : threads.samples) {
    if (!sample.in_call || in_mpi++ > 0) continue;
    call = call_text_.format(sample.call, view_requests(sample.call, std::nullopt));
  }
  std::string line = in_mpi == 0        ? std::string("outside MPI")
                     : status.finalizing ? "in " + call
                     : status.blocked    ? fmt::format("blocked for {:.1f} s in {}", status.blocked_seconds, call)
                     : status.polling    ? fmt::format("without progress for {:.1f} s, polling in {}", status.stalled_seconds, call)
                                         : "in " + call;
  if (in_mpi > 1) line += fmt::format(" (and {} more threads in MPI)", in_mpi - 1);
  if (line.size() > kLongest) line = line.substr(0, kLongest - 3) + "...";
  return line;
}

// A program that calls MPI from threads its thread level does not allow
// gets MPI's own behaviour, and one notice.
void LocalView::check_thread_level(const std::vector<ThreadState::Sample>& samples) {
  if (thread_level_noticed_ || program_thread_level_ == MPI_THREAD_MULTIPLE) return;
  const ThreadState::Sample* other = nullptr;
  int inside = 0;
  for (const ThreadState::Sample& sample : samples) {
    // A thread registers before its first call is recorded (LOCAL:THREAD:NOT_MAIN reports in between).
    if (sample.id != 0 && sample.call.function != FunctionId::None && !other) other = &sample;
    inside += sample.in_call ? 1 : 0;
  }
  if (program_thread_level_ <= MPI_THREAD_FUNNELED && other) {
    log::warn("the program runs at {}, yet thread {} (tid {}) called {}: only the thread that initialized "
              "MPI may call it at this level; ask MPI_Init_thread for MPI_THREAD_MULTIPLE",
              thread_level_name(program_thread_level_), other->id, other->tid,
              function_info(other->call.function).name);
    thread_level_noticed_ = true;
  } else if (program_thread_level_ == MPI_THREAD_SERIALIZED && inside > 1) {
    log::warn("the program runs at MPI_THREAD_SERIALIZED, yet {} threads were inside MPI at once: at this level "
              "they must take turns; ask MPI_Init_thread for MPI_THREAD_MULTIPLE",
              inside);
    thread_level_noticed_ = true;
  }
}

RankSnapshot LocalView::describe(bool ask_threads) const {
  LocalStatus status;
  std::unordered_map<int, double> thread_seconds;
  {
    std::lock_guard lock(status_mutex_);
    status = status_;
    thread_seconds = thread_seconds_;
  }
  const Threads threads = sample_threads();
  std::vector<Describer::ThreadView> views;
  std::uint64_t activity = threads.samples.size();
  for (std::size_t i = 0; i < threads.samples.size(); ++i) {
    const ThreadState::Sample& sample = threads.samples[i];
    activity = activity * 0x9E3779B97F4A7C15ull + sample.entered + sample.starts + sample.progress;
    Describer::ThreadView view{sample, threads.states[i]};
    const CallKind kind = function_info(sample.call.function).kind;
    if (sample.in_call && kind == CallKind::Blocking) {
      view.state = sample.call.shape == CallShape::Finalize ? RankState::Finalizing : RankState::Blocked;
      view.seconds = thread_seconds[sample.id];
    } else if (status.polling && kind == CallKind::Polling) {
      view.state = RankState::Polling;
      view.seconds = status.stalled_seconds;
    }
    views.push_back(view);
  }
  // A rank blocked through threads held outside MPI is so at this look
  // only when they are held still, unchanged since the tick: their digest
  // (with their context switches) joins the activity, so that two looks
  // agree only when none of them ran in between.
  bool blocked = status.blocked;
  std::size_t held_tasks = 0;
  if (status.held_outside) {
    const OutsideMpi now = look_outside(threads.samples);
    blocked = now.kind == OutsideMpi::Kind::Held && now.digest == status.outside_digest;
    held_tasks = blocked ? now.tasks : 0;
    activity = activity * 0x9E3779B97F4A7C15ull + now.digest;
  }
  const RankState rank_state = status.finalizing             ? RankState::Finalizing
                               : blocked                    ? RankState::Blocked
                               : status.polling             ? RankState::Polling
                                                            : RankState::Running;
  const double rank_seconds = rank_state == RankState::Polling ? status.stalled_seconds : status.blocked_seconds;
  RankSnapshot snapshot = describer_.describe(rank_state, rank_seconds, activity, views, ask_threads);
  snapshot.held_tasks = static_cast<std::uint32_t>(held_tasks);
  if (exit_.exiting()) snapshot.exit_status = exit_.status();
  return snapshot;
}

std::vector<std::string> LocalView::locate_stacks(const RankSnapshot& snapshot) const {
  const Threads threads = sample_threads();
  std::vector<std::string> located;
  for (const ThreadSnapshot& thread : snapshot.threads) {
    std::vector<stacks::FrameAddress> frames;
    for (std::size_t i = 0; i < threads.samples.size(); ++i) {
      const ThreadState::Sample& sample = threads.samples[i];
      if (sample.id != thread.id) continue;
      // Inside an MPI call (by its record, read again right before the
      // signal) a thread may be interrupted in a system call: the checker's
      // own sleeps end early and test again, MPI's calls are MPI's to
      // restart, and the unwind is exact. Outside MPI, never.
      const auto in_mpi = [state = threads.states[i], generation = sample.generation] {
        ThreadState::Sample now;
        return state->sample(now) && now.generation == generation && now.in_call;
      };
      stacks::RawStack raw;
      if (signals::capture_stack(sample.tid, raw, kStackTimeout, in_mpi) != stacks::Capture::None)
        frames = stacks::locate(raw);
    }
    located.push_back(stacks::serialize(frames));
  }
  return located;
}

}  // namespace mpisentry::monitor
