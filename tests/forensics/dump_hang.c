/* A hard deadlock to dump before DEADLOCK-TIMEOUT: every rank receives from
 * the next one (rank 0 <- 1 <- 2 ... <- 0) before anyone sends. Rank 0 says
 * "ready" once all are about to block. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

static void receive_from_next(int rank, int size) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("ready\n");
    fflush(stdout);
  }
  receive_from_next(rank, size);
  MPI_Finalize();
  return 0;
}
