// RMA windows by identity: each window gets an id that all its members agree
// on (from its communicator's id and how many windows were made on it
// before: creation is collective over the communicator), and a count of the
// window's own collectives (MPI_Win_fence, MPI_Win_free), so that the k-th
// fence can be matched across the members like the k-th collective of a
// communicator. A window keeps its own count rather than its communicator's:
// MPI orders the collectives of each communicator and of each window, not
// the interleaving of the two, which may differ from rank to rank (one
// thread fencing while another calls collectives on the communicator), and
// the communicator may be freed while the window lives.
//
// Program threads write the table (creation and free under a lock, counts
// lock-free); the monitor thread reads the counts lock-free.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "model/snapshot.hpp"
#include "records/call_record.hpp"

namespace mpisentry::windows {

// After a window-creating call succeeded on `comm`.
void created(MPI_Comm comm, MPI_Win win);
// After MPI_Win_free freed `win`, whose id was `id` before the call.
void freed(MPI_Win win, std::uint64_t id);

// What the wrappers record of a window: its id and its communicator's id;
// both 0 when the checker does not know the window (MPI_WIN_NULL, an
// invalid handle, or a window made before the checker started).
struct Known {
  std::uint64_t id = 0;
  std::uint64_t comm_id = 0;
};
Known find(MPI_Win win) noexcept;

// From MPI_Win_fence's and MPI_Win_free's wrappers: counts the call as the
// window's next collective and returns its number (0 for an unknown window).
std::uint64_t enter_collective(MPI_Win win) noexcept;

// The epochs' groups, as ranks of the window's communicator, kept for the
// calls that end the epoch: MPI_Win_post's for MPI_Win_wait/MPI_Win_test,
// MPI_Win_start's for MPI_Win_complete. `record` gets the first
// kCopiedRequests members and the group's size.
enum class Epoch { Exposure, Access };
void begin_epoch(Epoch epoch, MPI_Win win, MPI_Group group, CallRecord& record);
void end_epoch(Epoch epoch, MPI_Win win, CallRecord& record);

// Passive target, after a successful MPI_Win_lock or MPI_Win_lock_all, and
// after MPI_Win_unlock or MPI_Win_unlock_all: another member's lock, unlock
// or flush on the window may wait for this rank only while it holds a lock
// there (or runs outside MPI, where MPI need not make progress for it).
void lock_taken(MPI_Win win) noexcept;
void lock_released(MPI_Win win) noexcept;
// Whether this rank's one-sided calls on `win` now belong to a
// passive-target or a general active-target (MPI_Win_start) access epoch;
// true for a window the checker does not know.
bool in_lock_or_start_epoch(MPI_Win win) noexcept;

// The ids of the live windows on which this rank holds a passive-target lock.
std::vector<std::uint64_t> locked();

// The collectives entered so far on every live window, and on the recently
// freed ones, by window id (ids never collide with communicators' ids).
std::vector<CollectiveCount> collective_counts();

}  // namespace mpisentry::windows
