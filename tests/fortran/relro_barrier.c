/* Rank 0 waits in a barrier entered through fake_mpifort.c's read-only
 * PMPI_Barrier slot, which the checker must have redirected; rank 1 waits
 * to receive from rank 0: a hard deadlock. */
#include <mpi.h>

#include "support.h"

void fake_mpifort_barrier(MPI_Comm comm);

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int value = 0;
  if (world_rank_checked(2, 2) == 0)
    fake_mpifort_barrier(MPI_COMM_WORLD); /* mpisentry: blocks */
  else
    MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  MPI_Finalize();
  return 0;
}
