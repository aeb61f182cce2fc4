/* Not a deadlock: the last rank computes without MPI for argv[1] seconds
 * while rank 0 waits for it in MPI_Recv and the others in MPI_Barrier; then
 * all reduce and print a checksum. On the bed the last rank runs on another
 * host than rank 0, whose monitor judges. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  const int rank = world_rank_checked(2, 0);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double compute_seconds = seconds_argument(argc, argv, 1, "the last rank's computation time");
  const int last = size - 1;
  int value = rank + 1;
  if (rank == last) {
    compute_for(compute_seconds);
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Recv(&value, 1, MPI_INT, last, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  int sum = 0;
  MPI_Allreduce(&value, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("checksum %d\n", sum);
  MPI_Finalize();
  return 0;
}
