/* Deadlock: rank 0's MPI_Sendrecv has its receive half (from rank 1) done
 * and its 1 MB send half to rank 2 pending, while rank 2 waits in MPI_Recv
 * for a message with another tag that rank 0 sends only afterwards. Rank 1
 * sent and went on to finalize. */
/* mpisentry-expect: 3 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: rank 0 MPI_Sendrecv\(.*dest=2\b
 * mpisentry-expect: rank 2 MPI_Recv\(.*source=0\b
 * mpisentry-expect: blocks in exchange wait_for_rank_0
 * mpisentry-expect: cycle 0 2
 */
#include <mpi.h>
#include <stdlib.h>

#include "support.h"

enum { kLargeCount = 131072 /* doubles: 1 MB, past the eager limit */, kLargeTag = 0, kAfterTag = 1 };

static void exchange(double* large) {
  double small = 0;
  MPI_Sendrecv(large, kLargeCount, MPI_DOUBLE, 2, kLargeTag, &small, 1, MPI_DOUBLE, 1, 0, /* mpisentry: blocks */
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Send(&small, 1, MPI_DOUBLE, 2, kAfterTag, MPI_COMM_WORLD);
}

static void wait_for_rank_0(double* large) {
  MPI_Recv(large, 1, MPI_DOUBLE, 0, kAfterTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  MPI_Recv(large, kLargeCount, MPI_DOUBLE, 0, kLargeTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  double* large = calloc(kLargeCount, sizeof(double));
  const double small = 1;
  if (rank == 0)
    exchange(large);
  else if (rank == 1)
    MPI_Send(&small, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
  else
    wait_for_rank_0(large);
  free(large);
  MPI_Finalize();
  return 0;
}
