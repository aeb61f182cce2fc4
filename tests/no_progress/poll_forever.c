/* Busy polling that can never succeed: rank 0 tests a receive (tag 99) that
 * nobody matches, rank 1 probes for a message nobody sends, both with short
 * sleeps. No rank is blocked in MPI, yet nothing progresses. Gives up with
 * MPI_Abort after argv[1] seconds so that the job always ends. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#include "support.h"

static void give_up_after(double start, double limit) {
  if (now_seconds() - start < limit) return;
  fprintf(stderr, "poll_forever: still polling after %g s, aborting\n", limit);
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int rank = world_rank_checked(2, 2);
  const double limit = seconds_argument(argc, argv, 1, "how long to poll");
  const double start = now_seconds();
  int done = 0;
  if (rank == 0) {
    int message = 0;
    MPI_Request request;
    MPI_Irecv(&message, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &request);
    while (!done) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      usleep(1000);
      give_up_after(start, limit);
    }
  } else {
    while (!done) {
      MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &done, MPI_STATUS_IGNORE);
      usleep(1000);
      give_up_after(start, limit);
    }
  }
  MPI_Finalize();
  return 0;
}
