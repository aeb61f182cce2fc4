// Per-thread MPI activity: every thread that calls MPI gets a ThreadState on
// its first call, which only that thread writes (plain loads and stores, no
// read-modify-write on the hot path) and the monitor reads, but for one
// word: the monitor's ask to a thread waiting on requests. A thread's state
// is retired when the thread exits and may then serve a later thread; the
// memory is never freed, so the monitor can always read it.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <optional>

#include "records/call_record.hpp"

namespace mpisentry {

class ThreadState;
namespace detail {
ThreadState& register_this_thread() noexcept;
}  // namespace detail
void retire(void* state) noexcept;

class ThreadState {
 public:
  [[gnu::always_inline]] void enter(const CallRecord& record) noexcept {
    current_.store(record);
    entered_.store(entered_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  [[gnu::always_inline]] void leave(bool progressed) noexcept {
    if (progressed) progress_.store(progress_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    left_.store(left_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  // A send-receive done as its halves (CallRecord::halves): its receive is
  // done, its send not yet. That is progress, and a wait of its own.
  void receive_done(CallRecord& record) noexcept {
    record.halves = Halves::SendPending;
    leave(true);
    enter(record);
  }
  // A nonblocking start: it never waits, so only counted (the monitor tells
  // a thread that polls from one that computes by its calls).
  void count_start() noexcept { starts_.store(starts_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

  struct Sample {
    CallRecord call;             // the current or the last call
    bool in_call = false;
    std::uint64_t entered = 0;   // blocking and polling calls entered so far
    std::uint64_t starts = 0;    // nonblocking starts so far
    std::uint64_t progress = 0;  // completions so far
    int id = 0;                  // 0: the thread that initialized MPI
    pid_t tid = 0;               // the kernel's thread id, for the stack signal
    std::uint32_t generation = 0;  // changes when the state passes to another thread
  };
  // Whether a live thread owns this state.
  bool live() const noexcept { return generation_.load(std::memory_order_acquire) & 1; }
  // A consistent view; false when the thread changed calls while it was
  // read, or exited.
  bool sample(Sample& out) const noexcept;

  // Which requests of a Wait are still incomplete, as its own thread sees
  // them (a deadlock may rest only on requests incomplete at the look): the
  // monitor asks, the thread, testing its requests in a loop
  // (CallRecord::tests_requests), answers with what it found after the ask.
  // One asker at a time, the monitor's thread; asks are numbered from 1.
  std::uint64_t ask() const noexcept { return asked_.fetch_add(1, std::memory_order_acq_rel) + 1; }
  // The waiting thread: the ask not answered yet, or 0.
  std::uint64_t unanswered_ask() const noexcept {
    const std::uint64_t asked = asked_.load(std::memory_order_acquire);
    return asked != answered_.load(std::memory_order_relaxed) ? asked : 0;
  }
  // The waiting thread, once it has tested its requests after reading `ask`:
  // bit i of `incomplete` set when its call's request i (of the first
  // kCopiedRequests) was incomplete.
  void answer(std::uint64_t ask, std::uint32_t incomplete) noexcept {
    incomplete_.store(incomplete, std::memory_order_relaxed);
    answered_call_.store(entered_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    answered_.store(ask, std::memory_order_release);
  }
  // The monitor: the answer to `ask` when the thread gave it in the call
  // `sampled` was in; none before it answers, or when it answered in
  // another call (it left the sampled one) or is another thread.
  std::optional<std::uint32_t> answer_to(std::uint64_t ask, const Sample& sampled) const noexcept;

 private:
  friend ThreadState& detail::register_this_thread() noexcept;
  friend void retire(void*) noexcept;
  SharedRecord current_;
  std::atomic<std::uint64_t> entered_{0};
  std::atomic<std::uint64_t> left_{0};
  std::atomic<std::uint64_t> progress_{0};
  std::atomic<std::uint64_t> starts_{0};
  std::atomic<std::uint32_t> generation_{0};  // odd while owned by a live thread
  std::atomic<pid_t> tid_{0};
  std::atomic<int> id_{0};
  mutable std::atomic<std::uint64_t> asked_{0};  // the monitor's only word
  std::atomic<std::uint64_t> answered_{0};       // the last ask answered
  std::atomic<std::uint64_t> answered_call_{0};  // entered_ of the call that answered it
  std::atomic<std::uint32_t> incomplete_{0};     // the answer
};

namespace detail {
extern constinit thread_local ThreadState* current_thread_state __attribute__((tls_model("initial-exec")));
}  // namespace detail

// The calling thread's state; registers the thread on its first call.
inline ThreadState& this_thread_state() noexcept {
  ThreadState* state = detail::current_thread_state;
  return state ? *state : detail::register_this_thread();
}

// What every wrapper does as the call starts: completes the record and marks
// the calling thread as inside the call. Always inlined, like leave(), so
// that a wrapper's constant shape folds the fields it stores (for_each_used_field).
[[gnu::always_inline]] inline ThreadState& enter_call(CallRecord& record, FunctionId function) noexcept {
  record.function = function;
  ThreadState& self = this_thread_state();
  self.enter(record);
  return self;
}

// Calls visit(const ThreadState&) for every state that a live thread owns
// (the monitor's view; cheap, lock-free).
template <typename Visit>
void for_each_thread(Visit&& visit);

// Calls observer(its id, its kernel thread id) on each thread's first MPI
// call, once the thread has its state (the thread-level checks).
void observe_new_threads(void (*observer)(int id, pid_t tid)) noexcept;

// True once a thread could not be given a state (too many threads at once):
// its calls are invisible, so its rank must never be judged stuck.
bool untracked_threads() noexcept;

namespace detail {
inline constexpr int kMaxThreads = 1024;
ThreadState* thread_states() noexcept;
int thread_states_used() noexcept;
}  // namespace detail

template <typename Visit>
void for_each_thread(Visit&& visit) {
  ThreadState* states = detail::thread_states();
  const int used = detail::thread_states_used();
  for (int i = 0; i < used; ++i) visit(static_cast<const ThreadState&>(states[i]));
}

}  // namespace mpisentry
