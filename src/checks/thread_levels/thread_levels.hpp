// LOCAL:THREAD:*: MPI called as the thread level the program was given does
// not allow (MPI 4.1, section 11.6.3):
// - LOCAL:THREAD:NOT_MAIN: at MPI_THREAD_SINGLE or MPI_THREAD_FUNNELED, a
//   call from a thread other than the one that initialized MPI, reported at
//   that thread's first call (records/thread_state.hpp) with its stack;
// - LOCAL:THREAD:CONCURRENT: at MPI_THREAD_SERIALIZED, a call while another
//   thread is inside one, reported before the call with its stack, once per
//   calling thread.
// - LOCAL:THREAD:CONCURRENT_REQUEST: at MPI_THREAD_MULTIPLE, a Wait or Test
//   call (any of the eight) on a request that another thread's Wait or Test
//   call is completing at that moment (MPI 4.1, section 11.6.2), reported
//   before the call with both calls' places. A request is the program's
//   variable and the handle in it: MPICH gives many sends that completed at
//   once one handle, so a handle alone names no single request, and a copy
//   of the handle in another variable is not seen.
// Calls are made as the program asked. Only wrapped calls are seen (every
// call that waits or starts an operation).
#pragma once

#include <mpi.h>
#include <sys/types.h>

#include <cstddef>
#include <functional>

#include "api/functions.hpp"
#include "findings/findings.hpp"

namespace mpisentry::checks {

namespace detail {
extern bool watching_serialized;
extern bool watching_completions;
}

// checks/lifecycle.def.
void start_thread_levels(const StartContext& context);

inline bool watching_serialized() noexcept { return detail::watching_serialized; }
inline bool watching_completions() noexcept { return detail::watching_completions; }

// Around each wrapped call's forwarding (interceptors/protocol.hpp's
// ScopedCall, slow body), while watching_serialized().
void entered_mpi() noexcept;
void left_mpi() noexcept;

// A start or init call made the request in `*request`, while
// watching_completions(): a Wait or Test that completed the variable's last
// request, and has not yet let go of it, no longer completes this one (MPI
// hands a freed handle out again at once).
void request_made(const MPI_Request* request) noexcept;

// Around a Wait or Test call's forwarding (the generated wrappers' slow body,
// while LOCAL:THREAD:CONCURRENT_REQUEST watches): the calling thread
// completes these requests until the object goes. The handles are copied:
// MPI sets a completed one to MPI_REQUEST_NULL.
class CompletingRequests {
 public:
  CompletingRequests(FunctionId function, int count, const MPI_Request* requests, const void* call_site) noexcept;
  ~CompletingRequests();
  CompletingRequests(const CompletingRequests&) = delete;
  CompletingRequests& operator=(const CompletingRequests&) = delete;

  struct Claim {
    const MPI_Request* variable;
    MPI_Request handle;
    bool operator==(const Claim&) const = default;
    struct Hash {
      std::size_t operator()(const Claim& claim) const noexcept {
        return std::hash<const void*>{}(claim.variable) ^ std::hash<MPI_Request>{}(claim.handle);
      }
    };
  };

 private:
  void claim(FunctionId function, int count, const MPI_Request* requests, const void* call_site);
  Claim* claimed_ = nullptr;  // what this call claimed (none: null)
  std::size_t count_ = 0;
  pid_t thread_ = 0;
};

}  // namespace mpisentry::checks
