/* Deadlock: the root of an MPI_Bcast first waits in MPI_Recv for rank 2,
 * which sends only after the broadcast and so waits in MPI_Bcast for the
 * root; rank 1 waits in MPI_Bcast too. */
/* mpisentry-expect: 3 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: rank 0 MPI_Recv\(.*source=2\b
 * mpisentry-expect: rank 1 MPI_Bcast\(.*root=0\b
 * mpisentry-expect: rank 2 MPI_Bcast\(.*root=0\b
 * mpisentry-expect: blocks in broadcast wait_for_rank_2
 * mpisentry-expect: cycle 0 2
 */
#include <mpi.h>

#include "support.h"

static void broadcast(int* value) {
  MPI_Bcast(value, 1, MPI_INT, 0, MPI_COMM_WORLD); /* mpisentry: blocks */
}

static void wait_for_rank_2(int* value) {
  MPI_Recv(value, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  int value = rank;
  if (rank == 0) wait_for_rank_2(&value);
  broadcast(&value);
  if (rank == 2) MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
