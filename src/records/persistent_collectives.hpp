// Persistent collectives (MPI_Barrier_init and the other _init calls of
// MPI 4.0): each gets an id that all members agree on (from its
// communicator's id and how many persistent collectives were made on it
// before: the init calls are ordered on the communicator like nonblocking
// collectives), and a count of its starts, so that the k-th MPI_Start of it
// is matched across the members like the k-th collective of a communicator
// (each member starts each one as many times; their starts of different
// ones need not be in one order). Its waits are read as its blocking kin's
// (monitor/describe.cpp).
//
// Program threads write the counts (lock-free); the monitor thread reads them.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "model/snapshot.hpp"

namespace mpisentry::persistent_collectives {

// At a persistent collective's init on `comm`: its id.
std::uint64_t made(MPI_Comm comm);
// At a start: counts it, and returns its number (from 1).
std::uint64_t started(std::uint64_t id) noexcept;
// When its request is freed.
void freed(std::uint64_t id);
// Some persistent collective is alive (made, not freed).
bool any() noexcept;

// The starts so far of every live persistent collective and of the recently
// freed ones, by id (ids never collide with communicators' or windows').
std::vector<CollectiveCount> collective_counts();

}  // namespace mpisentry::persistent_collectives
