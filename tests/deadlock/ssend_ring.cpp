// A ring of synchronous sends written in C++, with the blocking call inside
// a namespaced function, so that the report must show its demangled name.
#include <mpi.h>

#include "support.h"

namespace halo {

void send_boundary(int rank, int size) {
  const int right = (rank + 1) % size;
  const int left = (rank + size - 1) % size;
  double boundary = rank;
  MPI_Ssend(&boundary, 1, MPI_DOUBLE, right, 0, MPI_COMM_WORLD); /* mpisentry: blocks */
  MPI_Recv(&boundary, 1, MPI_DOUBLE, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

}  // namespace halo

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 0);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  halo::send_boundary(rank, size);
  MPI_Finalize();
  return 0;
}
