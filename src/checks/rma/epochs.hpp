// GLOBAL:RMA:CONFLICT: the one-sided accesses of each fence epoch, compared
// at their targets (the rule: checks/rma/conflicts.hpp). Each rank keeps,
// per window, what its one-sided calls in a fence epoch access at each
// target (the target's bytes, from the displacement and the target
// datatype) and which of its own window's bytes their origin buffers use.
// The fence that ends the epoch sends each target its part with an
// MPI_Ialltoall on the checker's duplicate of the window's communicator,
// made when the window was; the next fence on the window (or MPI_Win_free)
// completes it, compares and reports at the target. A fence that ends an
// epoch may act as a barrier in a conforming MPI, so in a correct program
// every member enters it without waiting for anything another does after
// it, and starts its part as the fence returns: waiting for the exchange
// later cannot hang the program, and the program's own fence keeps its
// timing.
//
// Left out, so that nothing is claimed that is not sure: accesses while
// this rank holds a lock on the window or is in an MPI_Win_start epoch
// (other synchronizations order them), target datatypes with gaps,
// accumulates against accumulates, the target's loads and stores (not
// seen), and, past kKeptPerTarget accesses of one origin to one target in
// one epoch, the rest of them.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "api/functions.hpp"
#include "trackers/checksums.hpp"
#include "checks/rma/conflicts.hpp"

namespace mpisentry::checks {

// What a one-sided operation does at its target: `count` elements of
// `type` at displacement `disp` (in the target's displacement units).
struct TargetAccess {
  AccessKind kind = AccessKind::Read;
  MPI_Aint disp = 0;
  std::int64_t count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
};

inline constexpr int kKeptPerTarget = 16;

void start_rma_epochs(bool on);

// After a window-creating call made `win` on `comm` (collective over it).
void epoch_window_created(MPI_Comm comm, MPI_Win win);

// After a successful one-sided operation on `target` (not MPI_PROC_NULL):
// `read` and `written` are its origin-side buffers.
void epoch_access(FunctionId function, const BufferPart& read, const BufferPart& written, const TargetAccess& access,
                  int target, MPI_Win win, const void* call_site);

// After a successful MPI_Win_fence on `win` with `assertion`.
void epoch_fenced(MPI_Win win, int assertion);

// After MPI_Win_free freed `win`.
void epoch_window_freed(MPI_Win win);

// In MPI_Finalize: the last epoch of each window never freed is compared
// once its exchange completes, within kDrainLimit (findings/findings.hpp).
void finish_rma_epochs();

}  // namespace mpisentry::checks
