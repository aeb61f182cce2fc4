/* Correct: rank 0's MPI_Waitall holds two inactive persistent receives from
 * rank 1 (one never started, one started and already completed) next to a
 * pending MPI_Irecv from rank 2, which computes for argv[1] seconds first.
 * Rank 1 meanwhile waits in MPI_Recv for rank 0's answer: inactive requests
 * complete at once, so rank 0 does not wait for rank 1. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

enum { kNeverStartedTag = 5, kCompletedTag = 6, kLateTag = 7, kAnswerTag = 8 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  const double compute_seconds = seconds_argument(argc, argv, 1, "rank 2's computation time");
  int value = 10 * rank;
  if (rank == 0) {
    int never_started = -1, completed = -1, late = -1;
    MPI_Request requests[3];
    MPI_Recv_init(&never_started, 1, MPI_INT, 1, kNeverStartedTag, MPI_COMM_WORLD, &requests[0]);
    MPI_Recv_init(&completed, 1, MPI_INT, 1, kCompletedTag, MPI_COMM_WORLD, &requests[1]);
    MPI_Start(&requests[1]);
    MPI_Wait(&requests[1], MPI_STATUS_IGNORE);
    MPI_Irecv(&late, 1, MPI_INT, 2, kLateTag, MPI_COMM_WORLD, &requests[2]);
    MPI_Waitall(3, requests, MPI_STATUSES_IGNORE);
    MPI_Send(&late, 1, MPI_INT, 1, kAnswerTag, MPI_COMM_WORLD);
    printf("never started %d, completed %d, late %d\n", never_started, completed, late);
    MPI_Request_free(&requests[0]);
    MPI_Request_free(&requests[1]);
  } else if (rank == 1) {
    MPI_Send(&value, 1, MPI_INT, 0, kCompletedTag, MPI_COMM_WORLD);
    MPI_Recv(&value, 1, MPI_INT, 0, kAnswerTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    compute_for(compute_seconds);
    MPI_Send(&value, 1, MPI_INT, 0, kLateTag, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
