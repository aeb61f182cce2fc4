/* Two ranks each post a window of receives from themselves, then the sends
 * that match them, as a message-rate benchmark does, and then each receives
 * from the other before either sends: a hard deadlock (rank 0 -> rank 1 ->
 * rank 0). MPICH numbers its direct and indirect request handles alike in
 * their low bits and gives every send that completed at once one built-in
 * handle: the request table must keep all of them apart, or it loses an
 * active request and can prove nothing after. */
/* mpisentry-expect: 2 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: rank 0 MPI_Recv\(.*source=1\b
 * mpisentry-expect: rank 1 MPI_Recv\(.*source=0\b
 * mpisentry-expect: blocks in exchange
 */
#include <mpi.h>

#include "support.h"

enum { kWindow = 1000 };

static double sent[kWindow], received[kWindow];
static MPI_Request requests[2 * kWindow];

static void exchange_with_self(int rank) {
  for (int i = 0; i < kWindow; ++i)
    MPI_Irecv(&received[i], 1, MPI_DOUBLE, rank, i, MPI_COMM_WORLD, &requests[i]);
  for (int i = 0; i < kWindow; ++i)
    MPI_Isend(&sent[i], 1, MPI_DOUBLE, rank, i, MPI_COMM_WORLD, &requests[kWindow + i]);
  MPI_Waitall(2 * kWindow, requests, MPI_STATUSES_IGNORE);
}

static void exchange(int rank) {
  const int peer = 1 - rank;
  int value = rank;
  MPI_Recv(&value, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  MPI_Send(&value, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  exchange_with_self(rank);
  exchange(rank);
  MPI_Finalize();
  return 0;
}
