// The wait-for graph analysis with MUST's AND/OR semantics: which ranks can
// never proceed, and which of them form the cycle or knot that causes it.
// Pure: knows nothing of MPI or of the monitor thread.
#pragma once

#include <vector>

#include "report/snapshot.hpp"

namespace mpisentry::waitgraph {

// The deadlock among `ranks` (one snapshot per MPI_COMM_WORLD rank, index == rank), if any.
// A rank counts as stuck when its state is Blocked or Finalizing and it has been so
// for at least `min_stuck_seconds`; every other rank (Running, Polling, or blocked
// for less) is free: it may still act.
DeadlockCore find_deadlock(const std::vector<RankSnapshot>& ranks, double min_stuck_seconds);

// What one rank waits for after the collective, transfer and Finalize rules; a rank
// whose targets all drop out waits for nothing (mode None, no targets).
struct Arcs {
  WaitMode mode;
  std::vector<int> targets;
};

// The arcs the analysis uses, one entry per rank (for the DOT graph and the JSON).
// Costs one arc per Finalizing rank and other rank: call it for the report, not
// on every monitor round.
std::vector<Arcs> effective_arcs(const std::vector<RankSnapshot>& ranks);

}  // namespace mpisentry::waitgraph
