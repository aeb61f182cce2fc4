/* Ends with an exit status of its own after a clean MPI_Finalize: the
 * checker must pass it through unchanged. */
#include <mpi.h>
#include <stdlib.h>

#include "support.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  world_rank_checked(1, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  exit(3);
}
