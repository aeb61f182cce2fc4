/* Rank 0 computes (outside MPI) and rank 1 waits for a message from it, until
 * the job is ended from outside with SIGTERM. Both must end by the signal,
 * as they would without the checker. Rank 0 says "ready" once both are about
 * to start, so that the signal is sent only then. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

static volatile unsigned long sink;

static void compute_forever(void) {
  for (unsigned long i = 0;; ++i) sink = i; /* mpisentry: computes */
}

static void wait_for_rank_0(void) {
  int message = 0;
  MPI_Recv(&message, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("ready\n");
    fflush(stdout);
    compute_forever();
  } else {
    wait_for_rank_0();
  }
  MPI_Finalize();
  return 0;
}
