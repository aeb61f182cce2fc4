/* Rank 0 polls a receive with MPI_Test while rank 1 computes for argv[1]
 * seconds before it sends: a long stretch without progress that ends well. */
#include <mpi.h>
#include <unistd.h>

#include "support.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  const double compute_seconds = seconds_argument(argc, argv, 1, "rank 1's computation time");
  int message = 0;
  if (rank == 0) {
    MPI_Request request;
    MPI_Irecv(&message, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &request);
    int done = 0;
    while (!done) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      usleep(1000);
    }
  } else {
    compute_for(compute_seconds);
    MPI_Send(&message, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
