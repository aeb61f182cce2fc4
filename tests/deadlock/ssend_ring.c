/* Every rank sends synchronously to its right neighbour before receiving
 * from its left one: no send can complete, a hard deadlock around the ring. */
#include <mpi.h>

#include "support.h"

static void pass_to_right(int rank, int size) {
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  int token = rank;
  MPI_Ssend(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD); /* mpisentry: blocks */
  MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  pass_to_right(rank, size);
  MPI_Finalize();
  return 0;
}
