/* A hang that cannot be proven, and must not be silent. On 3 ranks: rank 2
 * computes for `seconds` before it starts a persistent barrier (MPI_Barrier_init,
 * MPI_Start); rank 1 waits for that barrier (a wait mpisentry cannot read) and
 * only then sends to rank 0;
 * rank 0 waits in MPI_Recv for rank 1. Ranks 0 and 1 are blocked while rank 2
 * computes, and whom rank 1 waits for cannot be read. Then every rank goes on
 * and the job ends. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  const double seconds = seconds_argument(argc, argv, 1, "seconds");
  MPI_Request barrier;
  int value = 7;
  if (rank == 2) compute_for(seconds);
#if MPI_VERSION >= 4
  MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &barrier);
#else
  lacks_mpi4("MPI_Barrier_init");
#endif
  MPI_Start(&barrier);
  if (rank == 0) MPI_Recv(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&barrier, MPI_STATUS_IGNORE);
  MPI_Request_free(&barrier);
  if (rank == 1) MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  if (rank == 0) printf("received %d\n", value);
  return 0;
}
