/* Rank 0 computes while the others wait for it in MPI_Allreduce, for as
 * long as argv[1] says; then all finish. Each rank prints its pid first, and
 * rank 0 "ready" once every rank is about to start, so that a test can send
 * DUMP-SIGNAL to one rank, or to all, while the job runs. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#include "support.h"

static void compute(double seconds) {
  compute_for(seconds); /* mpisentry: computes */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  const double seconds = seconds_argument(argc, argv, 1, "how long rank 0 computes");
  printf("pid %d %d\n", rank, (int)getpid());
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    printf("ready\n");
    fflush(stdout);
    compute(seconds);
  }
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* mpisentry: blocks */
  printf("rank %d sum %d\n", rank, sum);
  MPI_Finalize();
  return 0;
}
