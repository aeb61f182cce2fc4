// LOCAL:PARTITION:*: partitioned communication (MPI 4.0, section 4.2),
// judged before each call, which is then made as the program asked. Each
// partitioned request made through MPI_Psend_init or MPI_Precv_init is
// kept with its number of partitions and, for a send, which partitions its
// current start has readied:
// - LOCAL:PARTITION:WILDCARD: MPI_Precv_init from MPI_ANY_SOURCE or with
//   MPI_ANY_TAG, which partitioned communication does not allow;
// - LOCAL:PARTITION:INVALID: a partition outside 0 to partitions-1 in
//   MPI_Pready, MPI_Pready_range, MPI_Pready_list or MPI_Parrived, MPI_Pready*
//   on a receive's request, MPI_Parrived on a send's;
// - LOCAL:PARTITION:INACTIVE: MPI_Pready* or MPI_Parrived on a partitioned
//   request that was never started;
// - LOCAL:PARTITION:DOUBLE_READY: a partition readied twice in one start.
// A request the checker did not see made (or one that is not partitioned)
// is not judged.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "api/functions.hpp"
#include "findings/findings.hpp"

namespace mpisentry::checks {

namespace detail {
extern bool watching_partitions;
}

// checks/lifecycle.def.
void start_partitions(const StartContext& context);

inline bool watching_partitions() noexcept { return detail::watching_partitions; }

// Before MPI_Psend_init or MPI_Precv_init (`receives`): `peer` is its dest
// or source.
void partitioned_init(bool receives, int partitions, int peer, int tag, const void* call_site);
// After it succeeded.
void partitioned_made(MPI_Request request, int partitions, bool sends);

// After MPI_Start or MPI_Startall started `requests`.
void partitioned_started(int count, const MPI_Request requests[]);

// How a call names the partitions it readies: MPI_Pready's one (low ==
// high), MPI_Pready_range's low to high, MPI_Pready_list's `list` of `length`.
enum class PartitionsNamed : std::uint8_t { One, Range, List };

// Before a call of `function` readies partitions: judges, then counts them
// as readied.
void partitions_readied(FunctionId function, PartitionsNamed named, MPI_Request request, int low, int high,
                        const int list[], int length, const void* call_site);
// Before MPI_Parrived.
void partition_asked(MPI_Request request, int partition, const void* call_site);

// MPI_Request_free: the request is forgotten.
void partitioned_freed(MPI_Request request);

}  // namespace mpisentry::checks
