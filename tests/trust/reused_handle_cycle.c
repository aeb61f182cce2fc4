/* Deadlock behind a reused request handle: rank 0's MPI_Irecv from rank 1
 * completes, and its next MPI_Irecv, from rank 2 (MPICH hands out the same
 * handle), waits in MPI_Wait while rank 2 waits in MPI_Recv for what rank 0
 * sends only afterwards. Rank 1 sent and went on to finalize. */
/* mpisentry-expect: 3 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: rank 0 MPI_Wait\(request=MPI_Irecv\(.*source=2\b
 * mpisentry-expect: rank 2 MPI_Recv\(.*source=0\b
 * mpisentry-expect: blocks in receive_from wait_for_rank_0
 * mpisentry-expect: cycle 0 2
 */
#include <mpi.h>

#include "support.h"

static int receive_from(int peer) {
  int value = 0;
  MPI_Request request;
  MPI_Irecv(&value, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  return value;
}

static void wait_for_rank_0(void) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  int value = rank;
  if (rank == 0) {
    value = receive_from(1);
    value += receive_from(2);
    MPI_Send(&value, 1, MPI_INT, 2, 1, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else {
    wait_for_rank_0();
  }
  MPI_Finalize();
  return 0;
}
