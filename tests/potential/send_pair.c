/* Both ranks send to each other first and receive second. Small messages go
 * out eagerly, so this runs; it relies on MPI buffering, which the standard
 * does not promise: a potential deadlock. */
#include <mpi.h>

#include "support.h"

static void swap_values(int rank) {
  const int peer = 1 - rank;
  int mine = rank;
  int theirs = -1;
  MPI_Send(&mine, 1, MPI_INT, peer, 0, MPI_COMM_WORLD); /* mpisentry: blocks */
  MPI_Recv(&theirs, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  swap_values(world_rank_checked(2, 2));
  MPI_Finalize();
  return 0;
}
