/* Two ranks each receive from the other before either sends: a hard
 * deadlock (rank 0 -> rank 1 -> rank 0). */
/* mpisentry-expect: 2 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: rank 0 MPI_Recv\(.*source=1\b
 * mpisentry-expect: rank 1 MPI_Recv\(.*source=0\b
 * mpisentry-expect: blocks in exchange
 */
#include <mpi.h>

#include "support.h"

static void exchange(int rank) {
  const int peer = 1 - rank;
  int value = rank;
  MPI_Recv(&value, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  MPI_Send(&value, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  exchange(world_rank_checked(2, 2));
  MPI_Finalize();
  return 0;
}
