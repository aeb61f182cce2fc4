// The checks' locks are taken only at MPI_THREAD_MULTIPLE: below it the
// program's MPI calls never overlap (MPI_THREAD_SERIALIZED promises as
// much), so the checks' state, touched only inside those calls, needs none.
#pragma once

#include <sched.h>

#include <atomic>

namespace mpisentry::checks {

// The checks' sections are short (a table's lookup, a record's append), so a
// waiter spins a little, then yields its core, which the holder may need when
// threads outnumber cores: a futex sleep and wake cost more than the sections.
class SpinMutex {
 public:
  void lock() noexcept {
    int spins = 0;
    while (locked_.exchange(true, std::memory_order_acquire))
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < kSpins)
          pause();
        else
          sched_yield();
      }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpins = 64;
  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  std::atomic<bool> locked_{false};
};

class LockIfMultiple {
 public:
  LockIfMultiple(SpinMutex& mutex, bool multiple_threads) : mutex_(multiple_threads ? &mutex : nullptr) {
    if (mutex_) mutex_->lock();
  }
  ~LockIfMultiple() {
    if (mutex_) mutex_->unlock();
  }
  LockIfMultiple(const LockIfMultiple&) = delete;
  LockIfMultiple& operator=(const LockIfMultiple&) = delete;

 private:
  SpinMutex* mutex_;
};

}  // namespace mpisentry::checks
