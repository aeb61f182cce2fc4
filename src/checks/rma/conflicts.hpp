// GLOBAL:RMA:CONFLICT's rule (pure, unit-tested): MPI leaves undefined the
// outcome of two accesses to the same bytes of a window that no
// synchronization orders, unless both only read them or both are
// accumulate-family operations on the same basic type with the same
// operation or MPI_NO_OP (the window's default accumulate_ops,
// same_op_no_op). The accesses are the one-sided operations that target
// the window, from any origin and also two from one origin within one
// epoch (nothing orders them before its synchronization, but accumulates:
// MPI orders one origin's accumulates to a target), and the target's
// own one-sided calls whose origin buffers lie in its window. Two such own
// calls are LOCAL:MEMORY:OVERLAP's, not compared here.
//
// What orders two accesses of different processes, by their epochs:
// - fence epochs: different fences (of the window, counted alike by all);
// - general active target (MPI_Win_start at the origin): different exposure
//   epochs of the target (its MPI_Win_post ... MPI_Win_wait), which it
//   matches to the origins' access epochs in order;
// - passive target: an exclusive lock on either side (the lock's mutual
//   exclusion at the target);
// - otherwise, or between epochs of different kinds, time: each access
//   lies between its call and the synchronization that completed it at the
//   target (an unlock or flush at the origin, the target's MPI_Win_wait, the
//   next fence), and nothing can order two accesses whose spans overlap, as
//   an order must run from one's completion to the other's call. Spans are
//   compared only on one clock (CLOCK_MONOTONIC of one boot), and not where
//   a third origin's exclusive lock at the target may have ordered them
//   through its mutual exclusion. Accesses whose spans do not overlap are
//   taken as ordered: a race that timing hid is missed, never invented.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mpisentry::checks {

// AtomicRead: an accumulate-family operation with MPI_NO_OP, which only reads.
enum class AccessKind : std::uint8_t { Read, Write, Atomic, AtomicRead };

// The epoch of the origin's that an access was made in. MPI_Win_lock_all
// takes a shared lock on each target.
enum class EpochKind : std::uint8_t { Fence, SharedLock, ExclusiveLock, Start };

// The accumulate operation of an atomic access: 0 unknown, else an index
// of the predefined operations (epochs.cpp), kNoOp for MPI_NO_OP.
inline constexpr std::uint8_t kNoOp = 1;

// What orders an access (see above).
struct AccessOrder {
  EpochKind epoch = EpochKind::Fence;
  // The origin's epoch, or part of one between flushes of its target: two
  // accesses of one process are ordered when these differ.
  std::uint32_t serial = 0;
  // Fence: the window's fence that opened the epoch; Start: the target's
  // exposure epoch, counted from 1 (0: not known).
  std::uint64_t epoch_number = 0;
  // The access's span, CLOCK_MONOTONIC ns (completed 0: not known), and the
  // clock's domain: spans of one domain compare.
  std::int64_t issued = 0, completed = 0;
  std::uint64_t clock = 0;
};

// One access to a window's bytes [begin, end), as the target sees them:
// offsets from its window's base (addresses for a dynamic window).
struct WindowAccess {
  std::int64_t begin = 0, end = 0;
  AccessKind kind = AccessKind::Read;
  bool local = false;            // the target's own call; `origin` is then the target
  int origin = 0;                // the origin's rank in the window's group
  std::size_t index = 0;         // where the caller keeps what else it knows of it
  std::uint8_t op = 0;           // atomic accesses: the operation
  std::uint32_t basic_type = 0;  // atomic accesses: the basic datatype's code, 0 not known
  AccessOrder order;
};

// An origin's exclusive lock epoch at the target, as its span.
struct ExclusiveEpoch {
  int origin = 0;
  std::int64_t issued = 0, completed = 0;
  std::uint64_t clock = 0;
};

// Whether a and b conflict, given the exclusive lock epochs of all origins
// at the target (for the time rule's third origins).
bool conflicting(const WindowAccess& a, const WindowAccess& b, const std::vector<ExclusiveEpoch>& exclusive = {});

// Pairs of conflicting accesses among `accesses`, the one that begins
// first (then the lower index) first; at most `limit`.
struct Conflict {
  WindowAccess first, second;
};
std::vector<Conflict> find_conflicts(std::vector<WindowAccess> accesses, const std::vector<ExclusiveEpoch>& exclusive,
                                     std::size_t limit);

}  // namespace mpisentry::checks
