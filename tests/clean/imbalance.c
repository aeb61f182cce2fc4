/* Load imbalance, not a deadlock: rank 0 computes without MPI for argv[1]
 * seconds while the others wait in MPI_Barrier for it. */
#include <mpi.h>

#include "support.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  const double compute_seconds = seconds_argument(argc, argv, 1, "rank 0's computation time");
  if (rank == 0) compute_for(compute_seconds);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
