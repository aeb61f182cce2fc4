/* Many short round trips, then a checksum of everything received, summed
 * over both ranks and printed by rank 0: the checker must change neither
 * the messages nor the result. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

enum { kRoundTrips = 20000 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  const int peer = 1 - rank;
  long long checksum = 0;
  for (long long trip = 0; trip < kRoundTrips; ++trip) {
    long long message = trip * 3 + rank;
    if (rank == 0) {
      MPI_Send(&message, 1, MPI_LONG_LONG, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(&message, 1, MPI_LONG_LONG, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(&message, 1, MPI_LONG_LONG, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      message = message * 7 + 1;
      MPI_Send(&message, 1, MPI_LONG_LONG, peer, 0, MPI_COMM_WORLD);
    }
    checksum = (checksum * 31 + message) % 1000000007LL;
  }
  long long total = 0;
  MPI_Allreduce(&checksum, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("checksum %lld\n", total);
  MPI_Finalize();
  return 0;
}
