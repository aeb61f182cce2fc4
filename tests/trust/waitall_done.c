/* Correct: rank 0 waits for two receives, one of them already complete.
 * Rank 1 sends at once and then waits in MPI_Recv for rank 0's answer,
 * which comes after rank 0's wait; rank 2 computes for argv[1] seconds
 * before it sends. argv[2] names how rank 0 waits: waitall, waitany,
 * waitsome (loops), testall, testsome (polling loops). */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

enum Completion { kWaitall, kWaitany, kWaitsome, kTestall, kTestsome };
static const char* const kCompletions[] = {"waitall", "waitany", "waitsome", "testall", "testsome"};

static void complete_both(enum Completion completion, MPI_Request requests[2]) {
  int flag = 0;
  int index = 0;
  int indices[2];
  int done = 0;
  switch (completion) {
    case kWaitall: MPI_Waitall(2, requests, MPI_STATUSES_IGNORE); break;
    case kWaitany:
      for (done = 0; done < 2; ++done) MPI_Waitany(2, requests, &index, MPI_STATUS_IGNORE);
      break;
    case kWaitsome:
      while (done < 2) {
        MPI_Waitsome(2, requests, &index, indices, MPI_STATUSES_IGNORE);
        done += index;
      }
      break;
    case kTestall:
      while (!flag) MPI_Testall(2, requests, &flag, MPI_STATUSES_IGNORE);
      break;
    case kTestsome:
      while (done < 2) {
        MPI_Testsome(2, requests, &index, indices, MPI_STATUSES_IGNORE);
        if (index != MPI_UNDEFINED) done += index;
      }
      break;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  const double compute_seconds = seconds_argument(argc, argv, 1, "rank 2's computation time");
  const enum Completion completion = variant_argument(argc, argv, 2, "how rank 0 waits", kCompletions, 5);
  int value = 10 * rank;
  if (rank == 0) {
    int received[2] = {0, 0};
    MPI_Request requests[2];
    MPI_Irecv(&received[0], 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &requests[0]);
    MPI_Irecv(&received[1], 1, MPI_INT, 2, 0, MPI_COMM_WORLD, &requests[1]);
    complete_both(completion, requests);
    value = received[0] + received[1];
    MPI_Send(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    printf("received %d and %d\n", received[0], received[1]);
  } else if (rank == 1) {
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Recv(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    compute_for(compute_seconds);
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
