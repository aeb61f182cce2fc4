// The buffers of one-sided operations (MPI_Put, MPI_Get, MPI_Accumulate,
// MPI_Get_accumulate, MPI_Fetch_and_op, MPI_Compare_and_swap): MPI owns an
// operation's origin and result buffers from the call until a
// synchronization of its window completes it (MPI_Win_fence, _complete,
// _unlock, _unlock_all, _flush and _flush_local, each for the targets it
// covers). Two checks look at them:
// - LOCAL:MEMORY:ILLEGAL_MODIFICATION: the checksum of a buffer MPI reads
//   (the origin of a put or an accumulate) taken in the call is compared in
//   the synchronization that completes it;
// - LOCAL:MEMORY:OVERLAP: each buffer is pending (trackers/owned_buffers.hpp)
//   until then.
// - GLOBAL:RMA:CONFLICT: what each operation accesses at its target, with
//   its epoch (checks/rma/epochs.hpp).
// The request-based forms (MPI_Rput and the others) are looked at by
// GLOBAL:RMA:CONFLICT only: their buffers are the program's again once the
// request completes, which these buffers' checks do not follow.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "api/functions.hpp"
#include "findings/findings.hpp"
#include "trackers/checksums.hpp"
#include "checks/rma/epochs.hpp"

namespace mpisentry::checks {

namespace detail {
extern bool watching_rma;
}

// checks/lifecycle.def.
void start_rma(const StartContext& context);

inline bool watching_rma() noexcept { return detail::watching_rma; }

// After a window-creating call at `call_site` made `win` on `comm`.
void rma_window_created(MPI_Comm comm, MPI_Win win, const void* call_site);

// After an RMA operation's call: `read` is the buffer MPI reads, `written`
// the one it writes (either may be empty), `access` what it does at the
// target. Returns `result`.
int rma_issued(int result, FunctionId function, const BufferPart& read, const BufferPart& written,
               const TargetAccess& access, int target, MPI_Win win, const void* call_site);

// After a request-based one-sided operation's call (MPI_Rput, ...).
void rma_request_issued(FunctionId function, const TargetAccess& access, int target, MPI_Win win,
                        const void* call_site);

// After a successful synchronization that opens, divides or ends an epoch
// (checks/rma/epochs.hpp's epoch_synchronized).
void rma_synchronized(MPI_Win win, RmaSync sync, int target, int lock_type, MPI_Group group);

// After a successful synchronization of `win` that completes the operations
// on `target` (kEveryTarget: on all).
void rma_completed(MPI_Win win, int target);

// After a successful MPI_Win_fence on `win`: completes all its operations
// and ends its fence epoch.
void rma_fenced(MPI_Win win, int assertion);

// MPI_Win_free: what is pending on the window is forgotten.
void rma_window_freed(MPI_Win win);

}  // namespace mpisentry::checks
