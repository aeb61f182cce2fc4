// LOCAL:THREAD:*: MPI called as the thread level the program was given does
// not allow (MPI 4.1, section 11.6.3):
// - LOCAL:THREAD:NOT_MAIN: at MPI_THREAD_SINGLE or MPI_THREAD_FUNNELED, a
//   call from a thread other than the one that initialized MPI, reported at
//   that thread's first call (records/thread_state.hpp) with its stack;
// - LOCAL:THREAD:CONCURRENT: at MPI_THREAD_SERIALIZED, a call while another
//   thread is inside one, reported before the call with its stack, once per
//   calling thread.
// Calls are made as the program asked. Only wrapped calls are seen (every
// call that waits or starts an operation).
#pragma once

#include "findings/findings.hpp"

namespace mpisentry::checks {

namespace detail {
extern bool watching_serialized;
}

// checks/lifecycle.def.
void start_thread_levels(const StartContext& context);

inline bool watching_serialized() noexcept { return detail::watching_serialized; }

// Around each wrapped call's forwarding (interceptors/protocol.hpp's
// ScopedCall, slow body), while watching_serialized().
void entered_mpi() noexcept;
void left_mpi() noexcept;

}  // namespace mpisentry::checks
