/* Correct: rank 0 says "ready" once every rank is past MPI_Init, then
 * computes without MPI for argv[1] seconds while the others wait for it in
 * MPI_Barrier: a running job to ask for a report from outside. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  const double compute_seconds = seconds_argument(argc, argv, 1, "rank 0's computation time");
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("ready\n");
    fflush(stdout);
    compute_for(compute_seconds); /* mpisentry: computes */
  }
  MPI_Barrier(MPI_COMM_WORLD); /* mpisentry: blocks */
  MPI_Finalize();
  return 0;
}
