/* Termination detection with MPI_Ibarrier (the NBX sparse exchange, Hoefler
 * et al., PPoPP 2010): each rank sends one synchronous message to each of
 * its next two ranks, receives whatever arrives from any rank until its own
 * sends are done, then joins a nonblocking barrier and keeps receiving until
 * the barrier completes. Rank 0 computes for argv[1] seconds before it
 * sends, so the others poll and wait in the barrier that long. A correct
 * program: every rank ends having received exactly two messages. */
#include <mpi.h>
#include <stdio.h>

#include "support.h"

enum { kSends = 2, kTag = 3 };

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const double seconds = seconds_argument(argc, argv, 1, "seconds rank 0 computes first");
  const int rank = world_rank_checked(3, 0);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) compute_for(seconds);
  MPI_Request sends[kSends];
  int payload[kSends];
  for (int i = 0; i < kSends; ++i) {
    payload[i] = rank * 100 + i;
    MPI_Issend(&payload[i], 1, MPI_INT, (rank + 1 + i) % size, kTag, MPI_COMM_WORLD, &sends[i]);
  }
  MPI_Request barrier = MPI_REQUEST_NULL;
  int received = 0, done = 0;
  while (!done) {
    int arrived = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &arrived, &status);
    if (arrived) {
      int value = 0;
      MPI_Recv(&value, 1, MPI_INT, status.MPI_SOURCE, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      ++received;
    }
    if (barrier == MPI_REQUEST_NULL) {
      int sent = 0;
      MPI_Testall(kSends, sends, &sent, MPI_STATUSES_IGNORE);
      if (sent) MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
    } else {
      MPI_Test(&barrier, &done, MPI_STATUS_IGNORE);
    }
  }
  int total = 0;
  MPI_Reduce(&received, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (received != kSends) fprintf(stderr, "rank %d received %d messages\n", rank, received);
  if (rank == 0) printf("%d messages received in all\n", total);
  MPI_Finalize();
  return 0;
}
