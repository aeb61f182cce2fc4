#include "records/thread_state.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mutex>

namespace mpisentry {
namespace detail {

constinit thread_local ThreadState* current_thread_state = nullptr;

namespace {

ThreadState states[kMaxThreads];
std::atomic<int> states_used{0};
std::atomic<int> next_thread_id{0};
std::atomic<bool> untracked{false};
std::atomic<void (*)(int, pid_t)> new_thread_observer{nullptr};
pthread_key_t exit_key;

// Shared by threads that found no free state: written by several threads at
// once and never read.
ThreadState overflow;

}  // namespace

ThreadState* thread_states() noexcept { return states; }
int thread_states_used() noexcept { return states_used.load(std::memory_order_acquire); }

}  // namespace detail

// At thread exit (a pthread key's destructor): the state goes back to the pool.
void retire(void* state) noexcept {
  auto* self = static_cast<ThreadState*>(state);
  self->tid_.store(0, std::memory_order_relaxed);
  self->generation_.store(self->generation_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  detail::current_thread_state = nullptr;
}

ThreadState& detail::register_this_thread() noexcept {
  static std::once_flag key_created;
  std::call_once(key_created, [] { pthread_key_create(&exit_key, [](void* state) { retire(state); }); });
  for (int i = 0; i < kMaxThreads; ++i) {
    ThreadState& candidate = states[i];
    std::uint32_t generation = candidate.generation_.load(std::memory_order_relaxed);
    if ((generation & 1) || !candidate.generation_.compare_exchange_strong(generation, generation + 1,
                                                                           std::memory_order_acq_rel))
      continue;
    candidate.tid_.store(static_cast<pid_t>(syscall(SYS_gettid)), std::memory_order_relaxed);
    candidate.id_.store(next_thread_id.fetch_add(1, std::memory_order_relaxed), std::memory_order_relaxed);
    int used = states_used.load(std::memory_order_relaxed);
    while (used < i + 1 && !states_used.compare_exchange_weak(used, i + 1, std::memory_order_release)) {
    }
    pthread_setspecific(exit_key, &candidate);
    current_thread_state = &candidate;
    if (void (*observer)(int, pid_t) = new_thread_observer.load(std::memory_order_acquire))
      observer(candidate.id_.load(std::memory_order_relaxed), candidate.tid_.load(std::memory_order_relaxed));
    return candidate;
  }
  untracked.store(true, std::memory_order_release);
  current_thread_state = &overflow;
  return overflow;
}

bool untracked_threads() noexcept { return detail::untracked.load(std::memory_order_acquire); }

void observe_new_threads(void (*observer)(int id, pid_t tid)) noexcept {
  detail::new_thread_observer.store(observer, std::memory_order_release);
}

bool ThreadState::sample(Sample& out) const noexcept {
  const std::uint32_t generation = generation_.load(std::memory_order_acquire);
  if (!(generation & 1)) return false;
  const std::uint64_t entered = entered_.load(std::memory_order_acquire);
  const std::uint64_t left = left_.load(std::memory_order_acquire);
  if (!current_.load(out.call)) return false;
  if (entered_.load(std::memory_order_acquire) != entered) return false;
  out.entered = entered;
  out.in_call = entered != left;
  out.progress = progress_.load(std::memory_order_relaxed);
  out.starts = starts_.load(std::memory_order_relaxed);
  out.id = id_.load(std::memory_order_relaxed);
  out.tid = tid_.load(std::memory_order_relaxed);
  out.generation = generation;
  return generation_.load(std::memory_order_acquire) == generation;
}

std::optional<std::uint32_t> ThreadState::answer_to(std::uint64_t ask, const Sample& sampled) const noexcept {
  if (answered_.load(std::memory_order_acquire) != ask) return std::nullopt;
  const std::uint32_t incomplete = incomplete_.load(std::memory_order_relaxed);
  const std::uint64_t call = answered_call_.load(std::memory_order_relaxed);
  if (!sampled.in_call || call != sampled.entered || generation_.load(std::memory_order_acquire) != sampled.generation)
    return std::nullopt;
  return incomplete;
}

}  // namespace mpisentry
