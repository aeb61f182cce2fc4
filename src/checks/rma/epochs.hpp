// GLOBAL:RMA:CONFLICT: the one-sided accesses of every epoch kind (fence,
// general active target, passive target), compared at their targets (the
// rule: checks/rma/conflicts.hpp). Each rank keeps, per window, what its
// one-sided calls (the request-based ones too) access at each target (the
// target's bytes, from the displacement and the target datatype), with the
// epoch each was made in, when it was called and when a synchronization
// completed it, and which of its own window's bytes their origin buffers
// use. Each target keeps its exposure epochs (MPI_Win_post ...
// MPI_Win_wait), which match the origins' MPI_Win_start epochs in order.
//
// The window's collective synchronizations carry the exchange: each
// MPI_Win_fence without MPI_MODE_NOPRECEDE, and MPI_Win_free, send each
// target its part with an MPI_Ialltoall on the checker's duplicate of the
// window's communicator, made when the window was. A fence's exchange is
// completed by the next fence (or MPI_Win_free), a free's by the next free
// or fence of any window, or MPI_Finalize; the target then compares and
// reports. Both calls are collective over the window and may act as a
// barrier in a conforming MPI, so in a correct program every member enters
// them without waiting for anything another does after them, and starts
// its part as the call returns: waiting for the exchange later cannot hang
// the program, and the program's own calls keep their timing.
//
// Not judged, and said once per window and reason: accesses past
// kKeptPerTarget of one origin to one target between two exchanges, target
// datatypes with gaps, accesses whose spans lie on another host's clock
// where only time could order them, and MPI_Win_start epochs whose target
// exposure is not known. Never judged: accumulates on derived datatypes
// against other operations' types (taken as alike), and the target's loads
// and stores (not seen).
#pragma once

#include <mpi.h>

#include <cstdint>

#include "api/functions.hpp"
#include "checks/rma/conflicts.hpp"
#include "trackers/checksums.hpp"

namespace mpisentry::checks {

// What a one-sided operation does at its target: `count` elements of
// `type` at displacement `disp` (in the target's displacement units), with
// `op` for an accumulate-family one (MPI_OP_NULL for others), or `swaps`
// for MPI_Compare_and_swap.
struct TargetAccess {
  AccessKind kind = AccessKind::Read;
  MPI_Aint disp = 0;
  std::int64_t count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  bool swaps = false;
};

inline constexpr int kKeptPerTarget = 16;
// Exclusive lock epochs of one origin at one target between two exchanges
// kept apart.
inline constexpr int kKeptExclusive = 4;

// The targets a synchronization covers when it names none.
inline constexpr int kEveryTarget = -1;

// The window synchronizations that open, divide or end epochs, besides
// fences (api/mpi_api.json's rma_epoch).
enum class RmaSync : std::uint8_t { Lock, LockAll, Unlock, UnlockAll, Flush, FlushAll, Start, Complete, Post, Wait };

void start_rma_epochs(bool on);

// After a window-creating call at `call_site` made `win` on `comm`
// (collective over it).
void epoch_window_created(MPI_Comm comm, MPI_Win win, const void* call_site);

// After a successful one-sided operation on `target` (not MPI_PROC_NULL):
// `read` and `written` are its origin-side buffers.
void epoch_access(FunctionId function, const BufferPart& read, const BufferPart& written, const TargetAccess& access,
                  int target, MPI_Win win, const void* call_site);

// After a successful synchronization: `target` for MPI_Win_lock,
// MPI_Win_unlock and MPI_Win_flush, `lock_type` for MPI_Win_lock, `group`
// for MPI_Win_start and MPI_Win_post.
void epoch_synchronized(MPI_Win win, RmaSync sync, int target, int lock_type, MPI_Group group);

// After a successful MPI_Win_fence on `win` with `assertion`.
void epoch_fenced(MPI_Win win, int assertion);

// After MPI_Win_free freed `win`.
void epoch_window_freed(MPI_Win win);

// In MPI_Finalize: the last exchange of each window is compared once it
// completes, within kDrainLimit (findings/findings.hpp).
void finish_rma_epochs();

}  // namespace mpisentry::checks
