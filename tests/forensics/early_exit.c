/* Rank 1 calls exit(3) after MPI_Init without MPI_Finalize while rank 0
 * waits for it in MPI_Recv. */
#include <mpi.h>
#include <stdlib.h>

#include "support.h"

static void leave_early(void) {
  exit(3); /* mpisentry: exits */
}

static void wait_for_rank_1(void) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    wait_for_rank_1();
  else
    leave_early();
  MPI_Finalize();
  return 0;
}
