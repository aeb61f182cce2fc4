/* Each rank completes a nonblocking send to its right neighbour before it
 * posts the receive from its left one. It works only while MPI buffers the
 * sends: a potential deadlock around the ring. */
#include <mpi.h>

#include "support.h"

static void shift_right(int rank, int size) {
  int outgoing = rank;
  int incoming = -1;
  MPI_Request request;
  MPI_Isend(&outgoing, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  MPI_Irecv(&incoming, 1, MPI_INT, (rank + size - 1) % size, 0, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  shift_right(rank, size);
  MPI_Finalize();
  return 0;
}
