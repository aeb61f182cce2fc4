/* Rank 1's error handler ends the job with MPI_Abort(MPI_COMM_WORLD, 300)
 * after a failed call, while rank 0 waits in MPI_Barrier. Without the checker
 * the job ends with 300 mod 256 = 44. argv[1] is the thread level the
 * program asks for: "single" or "multiple". */
#include <mpi.h>

#include "support.h"

static void abort_with_300(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  (void)code;
  MPI_Abort(MPI_COMM_WORLD, 300);
}

int main(int argc, char** argv) {
  static const char* const kLevels[] = {"single", "multiple"};
  const int multiple = argc > 1 && variant_argument(argc, argv, 1, "the thread level", kLevels, 2) == 1;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, multiple ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  const int rank = world_rank_checked(2, 2);
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(abort_with_300, &handler);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
  if (rank == 1) {
    int value = 0;
    MPI_Send(&value, 1, MPI_INT, 5, 0, MPI_COMM_WORLD); /* rank 5 does not exist */
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
