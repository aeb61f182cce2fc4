/* Both ranks post a receive (tag 7) from the other and wait on it; nobody
 * sends: a hard deadlock inside MPI_Wait. */
/* mpisentry-expect: 2 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: rank 0 MPI_Wait\(
 * mpisentry-expect: rank 1 MPI_Wait\(
 * mpisentry-expect: blocks in await_reply
 */
#include <mpi.h>

#include "support.h"

static void await_reply(int rank) {
  int reply = 0;
  MPI_Request request;
  MPI_Irecv(&reply, 1, MPI_INT, 1 - rank, 7, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  await_reply(world_rank_checked(2, 2));
  MPI_Finalize();
  return 0;
}
