/* Ranks 0-2 receive in a circle (each from the next) and deadlock, while
 * the other ranks compute for argv[1] seconds and then finish: a deadlock
 * among some ranks that must be reported while the rest still run. */
#include <mpi.h>

#include "support.h"

static void wait_for_neighbour(int rank) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, (rank + 1) % 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(4, 0);
  const double compute_seconds = seconds_argument(argc, argv, 1, "the other ranks' computation time");
  if (rank < 3)
    wait_for_neighbour(rank);
  else
    compute_for(compute_seconds);
  MPI_Finalize();
  return 0;
}
