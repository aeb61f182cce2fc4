/* Rank 0 waits for a result from any rank while ranks 1 and 2 wait for
 * work from rank 0: everybody waits, a deadlock through MPI_ANY_SOURCE. */
#include <mpi.h>

#include "support.h"

static void collect_result(void) {
  int result = 0;
  MPI_Recv(&result, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

static void wait_for_task(void) {
  int task = 0;
  MPI_Recv(&task, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (world_rank_checked(3, 3) == 0)
    collect_result();
  else
    wait_for_task();
  MPI_Finalize();
  return 0;
}
