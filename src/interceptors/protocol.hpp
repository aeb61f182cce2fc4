// The protocol every generated wrapper follows, written once. A wrapper is
//
//   MPISENTRY_API int MPI_Isend(...) {
//     if (slow_paths::any()) [[unlikely]] return out_of_line<wrapped::Isend<true>>(...);
//     return wrapped::Isend<false>(...);
//   }
//
// where wrapped::Isend<kSlow> is the function's one generated body. With
// kSlow false every behaviour that is off by default (config/slow_paths.hpp)
// is false at compile time, so that body is the deadlock checks' minimum:
// the call recorded in the thread's record, PMPI called directly, the
// request remembered. With kSlow true the same body tests each behaviour as
// it is set, out of line, so that the fast one stays small.
#pragma once

#include <type_traits>

#include "findings/findings.hpp"
#include "checks/thread_levels/thread_levels.hpp"
#include "interceptors/delay_injection.hpp"

namespace mpisentry::interceptors {

// The body of a slow call, kept out of the wrapper.
template <auto Body, typename... Args>
[[gnu::noinline]] int out_of_line(Args... args) {
  return Body(args...);
}

// The scope of a call that may wait or starts a request: INJECT-DELAYS'
// sleeps outside it, LOCAL:THREAD:CONCURRENT's count of the threads inside
// MPI, and the stop at CHECK-MAX-ERRORS after it (the program has had MPI's
// own behaviour first); in the slow body only.
template <bool kSlow>
class ScopedCall {
 public:
  ScopedCall() noexcept {
    if constexpr (kSlow) {
      if (checks::watching_serialized()) checks::entered_mpi();
      delay_injection::around_call(true);
    }
  }
  ~ScopedCall() {
    if constexpr (kSlow) {
      if (checks::watching_serialized()) checks::left_mpi();
      checks::stop_at_error_limit();
      delay_injection::around_call(false);
    }
  }
  ScopedCall(const ScopedCall&) = delete;
  ScopedCall& operator=(const ScopedCall&) = delete;
};

// An object that only the slow body has (a recorded outcome, a logged
// poll): in the fast one, nothing, whatever it is given.
struct Absent {
  template <typename... Args>
  explicit constexpr Absent(Args&&...) noexcept {}
  template <typename... Args>
  constexpr void started(Args&&...) const noexcept {}
  template <typename... Args>
  constexpr void done(Args&&...) const noexcept {}
};
template <bool kSlow, typename T>
using SlowOnly = std::conditional_t<kSlow, T, Absent>;

}  // namespace mpisentry::interceptors
