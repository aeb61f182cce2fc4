/* The world splits into even and odd ranks. The odd ranks reduce on their
 * communicator and finish; rank 0 reduces on the even one, but rank 2 waits
 * for a message from rank 0 instead of joining it: rank 0 and rank 2 wait
 * for each other, a hard deadlock on a communicator other than the world. */
/* mpisentry-expect: 4 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: rank 0 MPI_Allreduce\(.*comm=(?!MPI_COMM_WORLD)
 * mpisentry-expect: rank 2 MPI_Recv\(.*source=0\b
 * mpisentry-expect: blocks in reduce_within_group wait_for_leader
 */
#include <mpi.h>

#include "support.h"

static void reduce_within_group(MPI_Comm group) {
  int one = 1;
  int members = 0;
  MPI_Allreduce(&one, &members, 1, MPI_INT, MPI_SUM, group); /* mpisentry: blocks */
}

static void wait_for_leader(void) {
  int order = 0;
  MPI_Recv(&order, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(4, 4);
  MPI_Comm group;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &group);
  if (rank == 2)
    wait_for_leader();
  else
    reduce_within_group(group);
  MPI_Comm_free(&group);
  MPI_Finalize();
  return 0;
}
