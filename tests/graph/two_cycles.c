/* Two deadlocks in one job of 12 ranks, and ranks waiting behind them:
 * ranks 0-2 each send synchronously to the next on a ring of three, ranks 3
 * and 4 each receive from the other, ranks 5-7 receive from rank 3 and ranks
 * 8-11 enter a barrier that ranks 0-7 never reach. A report must name both
 * cycles, not only the first. */
#include <mpi.h>

#include "support.h"

static void pass_on_ring(int rank) {
  const int value = rank;
  MPI_Ssend(&value, 1, MPI_INT, (rank + 1) % 3, 0, MPI_COMM_WORLD); /* mpisentry: blocks */
}

static void exchange_with_partner(int rank) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, rank == 3 ? 4 : 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

static void wait_for_result(void) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, 3, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

static void synchronize(void) {
  MPI_Barrier(MPI_COMM_WORLD); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(12, 12);
  if (rank < 3)
    pass_on_ring(rank);
  else if (rank < 5)
    exchange_with_partner(rank);
  else if (rank < 8)
    wait_for_result();
  else
    synchronize();
  MPI_Finalize();
  return 0;
}
