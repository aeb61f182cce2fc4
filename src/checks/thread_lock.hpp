// The checks' locks are taken only at MPI_THREAD_MULTIPLE: below it the
// program's MPI calls never overlap (MPI_THREAD_SERIALIZED promises as
// much), so the checks' state, touched only inside those calls, needs none.
#pragma once

#include <mutex>

namespace mpisentry::checks {

class LockIfMultiple {
 public:
  LockIfMultiple(std::mutex& mutex, bool multiple_threads) : lock_(mutex, std::defer_lock) {
    if (multiple_threads) lock_.lock();
  }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace mpisentry::checks
