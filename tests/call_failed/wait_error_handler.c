/* A receive that fails (truncated) inside a MPI_Waitall, under an error
 * handler of the program's own on MPI_COMM_WORLD that counts its calls and
 * returns: the checker runs the wait as its own loop of tests, and must
 * neither call the handler more often nor with other error classes than
 * MPI's wait does. The second receive's message comes SECONDS later
 * (argv[1]): rank 1 sends it once rank 2, which computes that long, has sent
 * to rank 1, so that the wait outlives the monitor's looks at the waits.
 * Rank 0 prints the wait's error class and the handler's calls. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#include "support.h"

enum { kMaxCalls = 8 };
static int handler_calls = 0;
static int handler_classes[kMaxCalls];

static void count_calls(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  if (handler_calls < kMaxCalls) MPI_Error_class(*code, &handler_classes[handler_calls]);
  ++handler_calls;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  const double later = seconds_argument(argc, argv, 1, "seconds before the second message");
  MPI_Errhandler handler;
  MPI_Comm_create_errhandler(count_calls, &handler);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, handler);
  if (rank == 0) {
    int one = 0, other = 0;
    MPI_Request requests[2];
    MPI_Status statuses[2];
    MPI_Irecv(&one, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(&other, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &requests[1]);
    int error_class;
    MPI_Error_class(MPI_Waitall(2, requests, statuses), &error_class);
    printf("MPI_Waitall: error class %d (MPI_ERR_IN_STATUS is %d); the handler was called %d times, with classes",
           error_class, MPI_ERR_IN_STATUS, handler_calls);
    for (int i = 0; i < handler_calls && i < kMaxCalls; ++i) printf(" %d", handler_classes[i]);
    printf("\n");
    if (requests[1] != MPI_REQUEST_NULL) MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    const int two[2] = {1, 2};
    int three = 0;
    usleep(100000);
    MPI_Send(two, 2, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Recv(&three, 1, MPI_INT, 2, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&three, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
  } else {
    const int three = 3;
    compute_for(later);
    MPI_Send(&three, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
  }
  MPI_Errhandler_free(&handler);
  MPI_Finalize();
  return 0;
}
