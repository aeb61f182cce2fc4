// The GLOBAL:COLLECTIVE comparison (pure, unit-tested): before each
// collective, member i sends member j one CollectiveRecord saying what i
// calls and what it sends to j and expects from j; j compares what it got
// from every peer with its own records.
#pragma once

#include <cstdint>
#include <vector>

#include "report/report.hpp"

namespace mpisentry::checks {

// What a member moves to or from one peer.
struct Amount {
  std::int64_t bytes = 0;
  std::uint64_t hash = 0;
  std::int64_t count = 0;    // elements of `type`, for the report
  std::uint8_t present = 0;  // 0: nothing moves this way (a Bcast's non-root sends nothing)
  std::uint8_t known = 0;    // 0: not compared (MPI_IN_PLACE, a type the checker cannot read)
  std::uint8_t untyped = 0;  // MPI_BYTE or MPI_PACKED inside: bytes only
  char type[45] = {};        // "MPI_INT", for the report
};

// Fixed size and plain: exchanged as MPI_BYTE.
struct CollectiveRecord {
  std::uint16_t kind = 0;          // FunctionId, a _c variant as the plain one
  std::uint8_t kind_only = 0;      // inter-communicator or neighbourhood: only the kind is compared
  std::uint8_t rooted = 0;
  std::uint8_t frees = 0;          // MPI_Comm_free or MPI_Comm_disconnect
  std::int32_t root = 0;
  std::int32_t op = -1;            // index among the predefined operations; -1: none or user-defined
  Amount sent;                     // what the writer sends to the reader
  Amount expected;                 // what the writer expects from the reader
};

struct Mismatch {
  report::Check check = report::Check::CollectiveOperation;
  int first = -1;  // the first peer (index into `from`) that disagrees
  int peers = 0;   // how many peers disagree
};

// The calls' agreement: `from[i]` is what peer i told this member, `mine`
// this member's own record. A different kind is an OPERATION_MISMATCH, or a
// COMM_FREE_MISMATCH when either side frees the communicator; only calls of
// the same kind are compared by root and by predefined reduction operation.
std::vector<Mismatch> compare_calls(const CollectiveRecord& mine, const std::vector<CollectiveRecord>& from);

// The data this member receives: for each peer i, what i sends it
// (`from[i].sent`) against what it expects from i (`mine[i].expected`):
// SIZE_MISMATCH when the bytes differ, DATATYPE:MISMATCH when the type
// signatures do. Nothing when the calls disagree (compare_calls says why).
std::vector<Mismatch> compare_data(const std::vector<CollectiveRecord>& mine,
                                   const std::vector<CollectiveRecord>& from);

}  // namespace mpisentry::checks
