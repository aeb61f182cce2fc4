// Partitioned requests (MPI_Psend_init, MPI_Precv_init, MPI 4.0 section
// 4.2), and for a send how many of the partitions of its current start are
// readied. Its message goes only when the last one is (MPI_Pready, _range,
// _list), so that is when it is counted as sent, not at MPI_Start; and a wait
// on it while partitions are left waits for its own rank, the only one that
// readies them (monitor/describe.cpp).
//
// Program threads write the counts (lock-free: at MPI_THREAD_MULTIPLE threads
// ready partitions of one request at once); the monitor thread reads them.
#pragma once

#include <mpi.h>

namespace mpisentry {
namespace tallies {
class CommTallies;
}  // namespace tallies

namespace partitioned_requests {

// MPI_Psend_init (`sends`) or MPI_Precv_init made `request`, of `partitions`
// partitions.
void made(MPI_Request request, int partitions, bool sends);
// Some partitioned request is alive: until then nothing else here need be asked.
bool any() noexcept;
// Whether `request` is a partitioned one.
bool is_partitioned(MPI_Request request) noexcept;
// Its partitions; 0 for a request that is not a known partitioned one.
int partitions_of(MPI_Request request) noexcept;
// MPI_Start (or MPI_Startall) started `request`: when it is a partitioned
// send, none of its partitions is readied and `tallies` count its message at
// the last, and true; false for any other request.
bool started_send(MPI_Request request, tallies::CommTallies* tallies) noexcept;
// Before MPI_Pready*: `count` more partitions readied. `last` when they are
// the last, with the tallies its message is counted on. A partition readied
// twice counts twice (an erroneous program): the message is then counted
// early, which only keeps it "in flight" for the deadlock checks.
struct Readied {
  bool last = false;
  tallies::CommTallies* tallies = nullptr;
};
Readied readied(MPI_Request request, int count) noexcept;
// The partitions of a partitioned send's current start not yet readied; 0
// for any other request.
int unreadied(MPI_Request request) noexcept;
// MPI_Request_free.
void freed(MPI_Request request);

}  // namespace partitioned_requests
}  // namespace mpisentry
