/* All ranks but the last enter MPI_Barrier; the last waits for a message
 * nobody sends and never reaches the barrier: a hard deadlock. */
/* mpisentry-expect: 4 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: rank 0 MPI_Barrier\(
 * mpisentry-expect: rank 1 MPI_Barrier\(
 * mpisentry-expect: rank 2 MPI_Barrier\(
 * mpisentry-expect: rank 3 MPI_Recv\(
 * mpisentry-expect: blocks in synchronize wait_for_work
 */
#include <mpi.h>

#include "support.h"

static void synchronize(void) {
  MPI_Barrier(MPI_COMM_WORLD); /* mpisentry: blocks */
}

static void wait_for_work(void) {
  int work = 0;
  MPI_Recv(&work, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == size - 1)
    wait_for_work();
  else
    synchronize();
  MPI_Finalize();
  return 0;
}
