/* Correct: rank 0's MPI_Sendrecv has one half done while the other waits
 * for rank 2, which computes for argv[1] seconds first; rank 1 meanwhile
 * waits in MPI_Recv for rank 0's answer, sent after the MPI_Sendrecv.
 * argv[2]: send_pending (the receive half, from rank 1, is done; the 1 MB
 * send half waits for rank 2 to receive) or recv_pending (the send half, to
 * rank 1, is done; the receive half waits for rank 2 to send). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "support.h"

enum Pending { kSendPending, kRecvPending };
static const char* const kPendings[] = {"send_pending", "recv_pending"};
enum { kLargeCount = 131072 /* doubles: 1 MB, past the eager limit */, kAnswerTag = 9 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  const double compute_seconds = seconds_argument(argc, argv, 1, "rank 2's computation time");
  const enum Pending pending = variant_argument(argc, argv, 2, "which half waits", kPendings, 2);
  double* large = calloc(kLargeCount, sizeof(double));
  double small = 1;
  double answer = 0;
  if (rank == 0) {
    for (int i = 0; i < kLargeCount; ++i) large[i] = 1;
    if (pending == kSendPending)
      MPI_Sendrecv(large, kLargeCount, MPI_DOUBLE, 2, 0, &small, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
    else
      MPI_Sendrecv(&small, 1, MPI_DOUBLE, 1, 0, &answer, 1, MPI_DOUBLE, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    answer += small;
    MPI_Send(&answer, 1, MPI_DOUBLE, 1, kAnswerTag, MPI_COMM_WORLD);
    printf("answer %.0f\n", answer);
  } else if (rank == 1) {
    if (pending == kSendPending)
      MPI_Send(&small, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    else
      MPI_Recv(&small, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&answer, 1, MPI_DOUBLE, 0, kAnswerTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    compute_for(compute_seconds);
    small = 2;
    if (pending == kSendPending)
      MPI_Recv(large, kLargeCount, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
      MPI_Send(&small, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
  }
  free(large);
  MPI_Finalize();
  return 0;
}
