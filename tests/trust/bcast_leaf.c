/* Correct under MPICH, unsafe by the standard: root 0 computes for argv[1]
 * seconds, then broadcasts. Rank 1 leaves its MPI_Bcast with the root's data
 * alone and passes it on to rank 2, which receives it before its own
 * MPI_Bcast. Were MPI_Bcast to synchronize, ranks 1 and 2 would deadlock. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  const double compute_seconds = seconds_argument(argc, argv, 1, "the root's computation time");
  int broadcast = rank == 0 ? 42 : 0;
  int relayed = 0;
  if (rank == 0) {
    compute_for(compute_seconds);
    MPI_Bcast(&broadcast, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Bcast(&broadcast, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Send(&broadcast, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
  } else {
    MPI_Recv(&relayed, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Bcast(&broadcast, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  int sums[2] = {0, 0};
  const int mine[2] = {broadcast, relayed};
  MPI_Reduce(mine, sums, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("broadcast sum %d, relayed %d\n", sums[0], sums[1]);
  MPI_Finalize();
  return 0;
}
