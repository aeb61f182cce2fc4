/* An MPI_Barrier_init barrier that every rank starts three times, but the
 * last rank only twice: it then waits for a message from rank 0, which waits
 * in the third start's MPI_Wait, as does rank 1. A hard deadlock, read as
 * the blocking barrier's. With argument "all", the last rank starts it a
 * third time too, and then receives the message: the correct twin.
 * With argument "bcast", an MPI_Bcast_init from rank 0 each rank starts and
 * waits for three times, correct; rank 0 prints the least sum any rank got.
 * With argument "waitall", an MPI_Bcast_init and an MPI_Barrier_init that
 * rank 0 starts in one order and the others in the other, completed by one
 * MPI_Waitall (correct; MPICH's own MPI_Testall fails on such requests, and
 * the checker's MPI_Waitall must not call it). */
/* mpisentry-expect: 3 ranks, GLOBAL:DEADLOCK:HARD
 * mpisentry-expect: rank 0 MPI_Wait\(request=MPI_Barrier_init
 * mpisentry-expect: rank 1 MPI_Wait\(request=MPI_Barrier_init
 * mpisentry-expect: rank 2 MPI_Recv\(
 * mpisentry-expect: blocks in main main
 * mpisentry-expect: rule start #3
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(3, 3);
  const char* mode = argc > 1 ? argv[1] : "";
  MPI_Request request;
  if (strcmp(mode, "waitall") == 0) {
    int value = rank == 0 ? 42 : -1;
    MPI_Request both[2];
    MPI_Bcast_init(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &both[0]);
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &both[1]);
    MPI_Start(&both[rank == 0 ? 0 : 1]);
    MPI_Start(&both[rank == 0 ? 1 : 0]);
    MPI_Waitall(2, both, MPI_STATUSES_IGNORE);
    MPI_Request_free(&both[0]);
    MPI_Request_free(&both[1]);
    int least = 0;
    MPI_Reduce(&value, &least, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("persistent_collective waitall: every rank got at least %d\n", least);
    MPI_Finalize();
    return 0;
  }
  if (strcmp(mode, "bcast") == 0) {
    int value = 0;
    MPI_Bcast_init(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
    int sum = 0;
    for (int round = 1; round <= 3; ++round) {
      if (rank == 0) value = round * 10;
      MPI_Start(&request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      sum += value;
    }
    MPI_Request_free(&request);
    int least = 0;
    MPI_Reduce(&sum, &least, 1, MPI_INT, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("persistent_collective bcast: every rank got at least %d\n", least);
    MPI_Finalize();
    return 0;
  }
  MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &request);
  int message = 0;
  for (int round = 1; round <= 3; ++round) {
    if (rank == 2 && round == 3 && strcmp(mode, "all") != 0) break;
    MPI_Start(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  }
  if (rank == 0) MPI_Send(&message, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
  if (rank == 2) MPI_Recv(&message, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  MPI_Request_free(&request);
  if (rank == 0) printf("persistent_collective %s: done\n", mode);
  MPI_Finalize();
  return 0;
}
