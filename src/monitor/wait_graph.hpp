// The wait-for graph analysis with MUST's AND/OR semantics, over ranks and
// their threads: which ranks can never proceed, and which of them form the
// cycles or knots that cause it, each a deadlock of its own. Pure: knows
// nothing of MPI or of the monitor.
//
// A rank can act as long as one of its threads can: a rank node waits (OR)
// for its blocked threads, and a thread node waits (its call's AND or OR)
// for rank nodes. A rank with a thread that runs or polls is free.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "model/snapshot.hpp"

namespace mpisentry::waitgraph {

struct Options {
  // A rank counts as stuck when it is Blocked or Finalizing for at least
  // this long; every other rank may still act.
  double min_stuck_seconds = 0;
  // Also count possible waits (AND), such as a Bcast leaf waiting for another
  // leaf: for warnings, and for reading calls that cannot match when every
  // rank is blocked. Never for a HARD verdict on its own.
  bool with_possible_waits = false;
};

// Blocked or Finalizing, with a thread, for at least `min_stuck_seconds`:
// a rank that cannot act by itself.
bool is_stuck(const RankSnapshot& rank, double min_stuck_seconds);

// The deadlock among `ranks` (one snapshot per MPI_COMM_WORLD rank, index == rank), if any.
DeadlockCore find_deadlock(const std::vector<RankSnapshot>& ranks, const Options& options);

// The arcs the analysis uses, after completed collectives and transfers under
// way dropped out: for the report's DOT graph and JSON. At most `max_arcs`:
// a thread's arcs are listed whole, or counted in `left_out` once they would
// pass it (k members of a collective that P - k ranks have not joined wait
// for k x (P - k) arcs, 2.5e9 when half of 100,000 ranks have).
struct ArcList {
  std::vector<WaitArc> arcs;
  std::size_t left_out = 0;
};
ArcList effective_arcs(const std::vector<RankSnapshot>& ranks, const Options& options,
                       std::size_t max_arcs = std::numeric_limits<std::size_t>::max());

// Ranks blocked in MPI for at least `min_waiting_seconds` that wait, directly
// or through other blocked ranks (definite or possible waits), for ranks that
// run outside MPI: the culprits of a hang that is not a deadlock.
struct OutsideMpi {
  std::vector<int> waiting;   // sorted
  std::vector<int> culprits;  // sorted
  bool empty() const { return culprits.empty(); }
};
OutsideMpi find_outside_mpi(const std::vector<RankSnapshot>& ranks, double min_waiting_seconds);

// How many collectives `rank` has entered on a communicator (0 when none).
std::uint64_t collectives_entered(const RankSnapshot& rank, std::uint64_t comm_id);

}  // namespace mpisentry::waitgraph
