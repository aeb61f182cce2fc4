/* Programs whose only race is a nonblocking probe from MPI_ANY_SOURCE, for
 * --explore. Rank 1 sleeps 300 ms and rank 2 100 ms before each sends rank 0
 * one message, so that a run left alone finds rank 2's first.
 *   probes SHAPE OUTCOME
 * SHAPE is how rank 0 looks:
 *   iprobe    MPI_Iprobe in a loop until it finds a message, then MPI_Recv
 *             of the sender found; twice
 *   improbe   MPI_Improbe in a loop, then MPI_Mrecv; twice
 *   peek      one MPI_Iprobe before anything came (it finds nothing), then
 *             MPI_Recv from MPI_ANY_SOURCE twice
 *   causal    the same, but rank 2 sends only once rank 0, after its
 *             MPI_Iprobe, has sent it a message: the probe can never find
 *             rank 2's (a schedule forcing it hangs before it comes)
 * OUTCOME:
 *   correct   every outcome is right: rank 0 prints what it got
 *   bug       rank 0 exits with status 3 when the first probe found rank 1's
 *             message (iprobe, improbe) or found any (peek): an outcome no
 *             run left alone gives. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { kTag = 1 };

static int rank;

/* The sender of the message rank 0 took, found by `shape`'s probe. */
static int take(const char* shape, int* value) {
  MPI_Status status;
  int found = 0;
  if (strcmp(shape, "improbe") == 0) {
    MPI_Message message;
    while (!found) MPI_Improbe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &found, &message, &status);
    MPI_Mrecv(value, 1, MPI_INT, &message, MPI_STATUS_IGNORE);
  } else {
    while (!found) MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &found, &status);
    MPI_Recv(value, 1, MPI_INT, status.MPI_SOURCE, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return status.MPI_SOURCE;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* shape = argc > 2 ? argv[1] : "";
  const char* outcome = argc > 2 ? argv[2] : "";
  const int bug = strcmp(outcome, "bug") == 0;
  const int causal = strcmp(shape, "causal") == 0;
  if ((strcmp(shape, "iprobe") != 0 && strcmp(shape, "improbe") != 0 && strcmp(shape, "peek") != 0 && !causal) ||
      (!bug && strcmp(outcome, "correct") != 0)) {
    if (rank == 0) fprintf(stderr, "usage: probes iprobe|improbe|peek|causal correct|bug\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 0) {
    int first = 0, second = 0;
    if (strcmp(shape, "peek") == 0 || causal) {
      int found = 0;
      MPI_Iprobe(MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE);
      if (found && bug) {
        fprintf(stderr, "a message was there at once\n");
        exit(3);
      }
      if (causal) MPI_Send(&rank, 1, MPI_INT, 2, kTag, MPI_COMM_WORLD);
      MPI_Recv(&first, 1, MPI_INT, MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Recv(&second, 1, MPI_INT, MPI_ANY_SOURCE, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      printf("peeked %s; got %d\n", found ? "a message" : "nothing", first + second);
    } else {
      const int from = take(shape, &first);
      if (from == 1 && bug) {
        fprintf(stderr, "rank 1's message came first\n");
        exit(3);
      }
      take(shape, &second);
      printf("first from %d; got %d\n", from, first + second);
    }
  } else if (rank <= 2) {
    usleep(rank == 1 ? 300000 : 100000);
    if (causal && rank == 2) {
      int asked = 0;
      MPI_Recv(&asked, 1, MPI_INT, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Send(&rank, 1, MPI_INT, 0, kTag, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
