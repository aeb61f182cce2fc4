/* Deadlock: rank 0's MPI_Waitall has its receive from rank 1 done and its
 * receive from rank 2 pending, while rank 2 waits in MPI_Recv for what rank
 * 0 sends only after the MPI_Waitall. Rank 1 sent and went on to finalize. */
/* mpisentry-expect: 3 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: rank 0 MPI_Waitall\(.*source=2\b
 * mpisentry-expect: rank 2 MPI_Recv\(.*source=0\b
 * mpisentry-expect: blocks in gather_from_both wait_for_rank_0
 * mpisentry-expect: cycle 0 2
 */
#include <mpi.h>

#include "support.h"

static void gather_from_both(void) {
  int received[2];
  MPI_Request requests[2];
  MPI_Irecv(&received[0], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &requests[0]);
  MPI_Irecv(&received[1], 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &requests[1]);
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE); /* mpisentry: blocks */
  MPI_Send(&received[0], 1, MPI_INT, 2, 1, MPI_COMM_WORLD);
}

static void wait_for_rank_0(void) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  const int value = rank;
  if (rank == 0)
    gather_from_both();
  else if (rank == 1)
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  else
    wait_for_rank_0();
  MPI_Finalize();
  return 0;
}
